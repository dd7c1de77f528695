package dev.tether.docker;

import java.time.Duration;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.tether.daemon.Periodic;
import dev.tether.process.ChildProcesses;

/**
 * Removes containers labelled with this instance that no live child owns: at start (what a killed daemon
 * left behind) and then periodically (a container created after its teardown's removal already ran).
 */
@Component
public final class ContainerReaper implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(ContainerReaper.class);

    private final DockerEngine engine;
    private final InstanceId instance;
    private final ChildProcesses children;
    private final DockerProperties properties;
    private final Counter reaped;
    private final Periodic schedule = new Periodic();
    private volatile boolean engineWasReachable = true;

    public ContainerReaper(DockerEngine engine, InstanceId instance, ChildProcesses children,
            DockerProperties properties, MeterRegistry registry) {
        this.engine = engine;
        this.instance = instance;
        this.children = children;
        this.properties = properties;
        this.reaped = Counter.builder("tether.children.reaped")
                .description("containers of this instance removed because no live child owned them")
                .register(registry);
    }

    /** Removes every orphan now; emits how many were removed. */
    public Mono<Long> reapOnce() {
        return engine.containersLabelled(DockerLabels.INSTANCE, instance.value())
                .filter(container -> !children.owns(String.valueOf(container.label(DockerLabels.SESSION))))
                .flatMap(container -> engine.remove(container.id())
                        .doOnNext(removed -> log.warn("removed orphaned container {} of session {}",
                                container.names(), container.label(DockerLabels.SESSION))))
                .filter(Boolean::booleanValue)
                .count()
                .doOnNext(reaped::increment)
                .doOnSuccess(count -> engineWasReachable = true);
    }

    /**
     * Removes every container another replica left, those it created after it was reaped once included (a {@code docker
     * run} client of a dead replica may have its container created late, when the engine gets to it). {@code stillDead}
     * is asked after the engine listed them, just before they are removed: a replica that came back under the same id
     * has written its lease anew, and what it runs then is its own. Emits how many were removed.
     */
    public Mono<Long> reapReplica(String deadInstance, Mono<Boolean> stillDead) {
        return engine.containersLabelled(DockerLabels.INSTANCE, deadInstance)
                .collectList()
                .filterWhen(found -> found.isEmpty() ? Mono.just(false) : stillDead)
                .flatMapMany(Flux::fromIterable)
                .flatMap(container -> engine.remove(container.id())
                        .doOnNext(removed -> log.warn("removed container {} of replica {}, whose lease ran out",
                                container.names(), deadInstance)))
                .filter(Boolean::booleanValue)
                .count()
                .doOnNext(reaped::increment);
    }

    @Override
    public void start() {
        schedule.start(Duration.ZERO, properties.reapInterval(), Schedulers.parallel(), this::reapOnce, this::engineUnreachable);
    }

    @Override
    public void stop() {
        schedule.stop();
    }

    @Override
    public boolean isRunning() {
        return schedule.isRunning();
    }

    /** Starts with the children's lifecycle, so leftovers are gone before the server takes requests. */
    @Override
    public int getPhase() {
        return 1;
    }

    private void engineUnreachable(Throwable error) {
        if (engineWasReachable) {
            log.info("Docker engine not reachable at {}; orphan reaping waits for it: {}", properties.socket(), error.toString());
            engineWasReachable = false;
        }
    }
}
