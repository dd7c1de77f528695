package dev.tether.process;

import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.tether.daemon.TetherProperties;
import dev.tether.tracing.Spans;

/**
 * Starts stdio children and owns them on behalf of the pipelines that need them. The only way to get a
 * {@link ChildProcess} is {@link #using}, so a child can never outlive the subscription it was made for.
 *
 * <p>As a lifecycle bean it kills what a previous run left behind (from the ledger) before the server
 * accepts requests, and on shutdown tears down every live child, waiting a bounded time.
 */
@Component
public final class ChildProcesses implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(ChildProcesses.class);

    private final ProcessProperties properties;
    private final TeardownLadder ladder;
    private final ChildLedger ledger;
    private final ChildMeters meters;
    private final ChildEnvironment environment;
    private final Set<ChildProcess> live = ConcurrentHashMap.newKeySet();
    private final Set<String> starting = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final ObservationRegistry observations;

    @Autowired
    public ChildProcesses(ProcessProperties properties, TetherProperties tether, ContainerRemover containers,
            MeterRegistry registry, ObservationRegistry observations) {
        this(properties, containers, tether, registry, Schedulers.newSingle("tether-teardown", true), System.getenv(), observations);
    }

    public ChildProcesses(ProcessProperties properties, TetherProperties tether, ContainerRemover containers,
            MeterRegistry registry) {
        this(properties, tether, containers, registry, ObservationRegistry.NOOP);
    }

    ChildProcesses(ProcessProperties properties, ContainerRemover containers, TetherProperties tether,
            MeterRegistry registry, Scheduler teardownTimer) {
        this(properties, containers, tether, registry, teardownTimer, System.getenv());
    }

    /** {@code parentEnvironment} is the daemon's environment, what children may inherit from (see {@link ChildEnvironment}). */
    ChildProcesses(ProcessProperties properties, ContainerRemover containers, TetherProperties tether,
            MeterRegistry registry, Scheduler teardownTimer, Map<String, String> parentEnvironment) {
        this(properties, containers, tether, registry, teardownTimer, parentEnvironment, ObservationRegistry.NOOP);
    }

    /** {@code observations} gets a span for each teardown ({@link Spans}). */
    private ChildProcesses(ProcessProperties properties, ContainerRemover containers, TetherProperties tether,
            MeterRegistry registry, Scheduler teardownTimer, Map<String, String> parentEnvironment, ObservationRegistry observations) {
        this.properties = properties;
        this.observations = observations;
        this.environment = new ChildEnvironment(parentEnvironment, properties.passEnv());
        this.ladder = new TeardownLadder(properties, containers, teardownTimer);
        this.ledger = new ChildLedger(tether.dataDir().resolve("children.ledger"));
        this.meters = new ChildMeters(registry, live);
    }

    /**
     * Starts a child for {@code body} and tears it down when the returned Flux completes, fails or is
     * cancelled, including when cancelled while the process is still being started. Teardown is started,
     * not awaited: the caller's result does not wait for a slow child to exit.
     */
    public <T> Flux<T> using(ChildSpec spec, Function<ChildProcess, ? extends Publisher<T>> body) {
        return Flux.defer(() -> {
            Leash leash = new Leash();
            return Flux.usingWhen(spawn(spec, leash), body,
                            child -> release(child, "completed"),
                            (child, error) -> release(child, "failed: " + error),
                            child -> release(child, "cancelled"))
                    .doOnCancel(leash::cancel);
        });
    }

    /**
     * The subscriber's cancel and the child's arrival, each seen by the other whichever comes first. A child that
     * arrives on the spawn thread while the subscriber cancels can slip past {@code usingWhen} (its cancel reads "no
     * resource yet", then the resource lands): one such child in thousands was never torn down. Whoever of the two
     * comes second releases it; a release that comes twice does nothing the second time.
     */
    private static final class Leash {

        private final AtomicBoolean cancelled = new AtomicBoolean();
        private final AtomicReference<ChildProcess> child = new AtomicReference<>();

        boolean cancelled() {
            return cancelled.get();
        }

        void cancel() {
            cancelled.set(true);
            ChildProcess started = child.get();
            if (started != null) {
                started.release("cancelled");
            }
        }

        void started(ChildProcess started) {
            child.set(started);
            if (cancelled.get()) {
                started.release("cancelled while starting");
            }
        }
    }

    /** Ids of children alive or being started now; a container labelled with any other id is an orphan. */
    public boolean owns(String childId) {
        return starting.contains(childId) || live.stream().anyMatch(child -> child.id().equals(childId));
    }

    /** Completes once a task went through the threads that start children and those that end them. */
    public Mono<Void> probe() {
        return Mono.fromRunnable(() -> { }).subscribeOn(ProcessThreads.SPAWN)
                .then(Mono.fromRunnable(() -> { }).subscribeOn(ProcessThreads.TEARDOWN)).then();
    }

    /** The live children, for diagnostics and tests. */
    public Collection<ChildProcess> live() {
        return Set.copyOf(live);
    }

    private Mono<Void> release(ChildProcess child, String reason) {
        return Mono.fromRunnable(() -> child.release(reason));
    }

    private Mono<ChildProcess> spawn(ChildSpec spec, Leash leash) {
        return Mono.create(sink -> {
            ProcessThreads.SPAWN.schedule(() -> {
                if (leash.cancelled()) {
                    return;
                }
                if (stopped.get()) {
                    // A session start the pool kept going (an abandoned start's linger) must not outlive shutdown.
                    sink.error(new ChildSpawnException(spec, new IllegalStateException("the daemon is shutting down")));
                    return;
                }
                ChildProcess child;
                try {
                    child = start(spec);
                }
                catch (RuntimeException ex) {
                    sink.error(ex);
                    return;
                }
                leash.started(child);
                sink.success(child);
                if (stopped.get()) {
                    // Started while shutdown took its list of live children: nobody else would end it.
                    child.release("daemon shutdown");
                }
            });
        });
    }

    private ChildProcess start(ChildSpec spec) {
        ProcessBuilder builder = new ProcessBuilder(spec.argv());
        builder.environment().clear();
        builder.environment().putAll(environment.of(spec));
        spec.cwd().ifPresent(cwd -> builder.directory(cwd.toFile()));
        starting.add(spec.id());
        try {
            Process process = builder.start();
            ChildProcess child = new ChildProcess(spec, process, (int) properties.stderrTail().toBytes(),
                    properties.stdoutBound(), this::tearDown);
            live.add(child);
            ledger.add(child);
            meters.spawned(child);
            log.debug("{}: started {}", child, spec.describe());
            return child;
        }
        catch (IOException ex) {
            throw new ChildSpawnException(spec, ex);
        }
        finally {
            starting.remove(spec.id());
        }
    }

    private Mono<TeardownReport> tearDown(ChildProcess child) {
        return Spans.around(observations, "tether.child.teardown",
                KeyValues.of("tether.child", child.id(), "tether.teardown.reason", child.teardownReason()), climb(child));
    }

    private Mono<TeardownReport> climb(ChildProcess child) {
        return ladder.climb(child)
                .subscribeOn(ProcessThreads.TEARDOWN)
                .doOnNext(report -> {
                    meters.tornDown(report);
                    if (report.survivors().isEmpty()) {
                        log.debug("{}: torn down at rung {} in {} ms ({}); exit {}, container removed: {}", child,
                                report.rung().tag(), report.took().toMillis(), child.teardownReason(),
                                report.exitCode().map(String::valueOf).orElse("?"), report.containerRemoved());
                    }
                    else {
                        log.error("{}: processes {} survived SIGKILL ({})", child, report.survivors(), child.teardownReason());
                    }
                })
                .doOnError(error -> log.error("{}: teardown failed ({})", child, child.teardownReason(), error))
                .doFinally(signal -> {
                    live.remove(child);
                    ledger.remove(child);
                });
    }

    @Override
    public void start() {
        if (running.compareAndSet(false, true)) {
            int reaped = ledger.reapLeftovers().size();
            if (reaped > 0) {
                log.warn("killed {} child process tree(s) left by a previous run", reaped);
            }
        }
    }

    @Override
    public void stop(Runnable callback) {
        running.set(false);
        stopped.set(true);
        Duration timeout = properties.shutdownTimeout();
        Flux.fromIterable(live())
                .flatMap(child -> {
                    child.release("daemon shutdown");
                    return child.onDispose();
                })
                .then()
                .timeout(timeout)
                .doFinally(signal -> callback.run())
                .subscribe(null, error -> log.warn("children still tearing down after {}: {}", timeout, live()));
    }

    @Override
    public void stop() {
        stop(() -> { });
    }

    @Override
    public boolean isRunning() {
        return running.get();
    }

    /** Stops after the web server has stopped taking requests, so no child is started behind our back. */
    @Override
    public int getPhase() {
        return 0;
    }
}
