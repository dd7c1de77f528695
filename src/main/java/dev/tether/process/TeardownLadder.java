package dev.tether.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.tether.process.TeardownReport.Rung;

/**
 * Ends a child and everything it started, one bounded rung at a time: close stdin, wait; for a {@code docker run}
 * child, end its container through the engine and wait for the client to exit by itself; SIGTERM the tree,
 * wait; SIGKILL the tree, wait; then remove its container, whatever happened before.
 *
 * <p>The stop rung is for docker children what SIGTERM is for plain ones, without SIGTERM's races. A client still
 * creating its container holds the EOF it was sent until the container runs, which on a busy machine takes longer
 * than any EOF grace; signalled meanwhile, it dies before it proxies signals (Go's default for SIGTERM) and leaves the
 * container it asked for to be created and never started, or it proxies the signal to a container that does not run
 * yet, and the signal is lost. The engine ends a container whatever the client is doing (stops a running one, removes
 * one that does not run), and a client whose container ended exits by itself. While the engine has no container of
 * that child yet, it is asked again, for at most {@code tether.process.docker-stop-grace}.
 */
final class TeardownLadder {

    private static final Logger log = LoggerFactory.getLogger(TeardownLadder.class);

    private static final Duration CONTAINER_RECHECK = Duration.ofSeconds(2);
    private static final Duration ZOMBIE_POLL = Duration.ofMillis(100);
    private static final Duration STOP_RETRY = Duration.ofMillis(250);
    private static final Duration EXIT_CODE_WAIT = Duration.ofSeconds(1);

    private final ProcessProperties properties;
    private final ContainerRemover containers;
    private final Scheduler timer;

    /**
     * @param timer runs the grace periods; a virtual-time scheduler in tests
     */
    TeardownLadder(ProcessProperties properties, ContainerRemover containers, Scheduler timer) {
        this.properties = properties;
        this.containers = containers;
        this.timer = timer;
    }

    Mono<TeardownReport> climb(ChildProcess child) {
        return Mono.defer(() -> {
            long start = timer.now(TimeUnit.MILLISECONDS);
            List<ProcessHandle> tree = child.tree();
            // Closing may block behind a writer stuck on a full pipe; the signals below unblock it.
            ProcessThreads.TEARDOWN.schedule(child::closeStdin);
            return awaitGone(tree, properties.eofGrace())
                    .flatMap(gone -> gone ? Mono.just(Rung.EOF) : stop(child, tree))
                    .flatMap(rung -> Mono.zip(removeContainer(child, rung), exitCode(child)).map(ended -> new TeardownReport(
                            child.id(), rung, ended.getT2(), ended.getT1(), survivors(tree),
                            Duration.ofMillis(timer.now(TimeUnit.MILLISECONDS) - start))));
        });
    }

    /**
     * The child's exit code. The ladder may see it gone as a zombie a moment before the JVM has reaped it and
     * knows its code; every rung ends the child, so the code follows at once, and the bound only guards the report.
     */
    private Mono<Optional<Integer>> exitCode(ChildProcess child) {
        return child.onExit().map(Optional::of).timeout(EXIT_CODE_WAIT, Mono.fromSupplier(child::exitCode), timer);
    }

    /** For a docker child, ends its container and waits for the client to follow; any other child goes on to SIGTERM. */
    private Mono<Rung> stop(ChildProcess child, List<ProcessHandle> tree) {
        return child.containerName()
                .map(name -> Mono.firstWithSignal(awaitGone(tree, properties.dockerStopGrace()), endContainer(child, name))
                        .flatMap(gone -> gone ? Mono.just(Rung.STOP) : terminate(child, tree)))
                .orElseGet(() -> terminate(child, tree));
    }

    /** Asks the engine to end the container until it has one to end; never completes: the client's exit decides. */
    private Mono<Boolean> endContainer(ChildProcess child, String name) {
        return Mono.defer(() -> containers.stopContainerOf(child.spec(), properties.termGrace()))
                // The engine answers once the container is down, after the grace at most; a slow engine is bounded.
                .timeout(properties.termGrace().plus(properties.killGrace()), timer)
                .onErrorResume(error -> {
                    log.warn("{}: could not stop container {}: {}", child, name, error.toString());
                    return Mono.just(false);
                })
                .filter(Boolean::booleanValue)
                .repeatWhenEmpty(attempts -> attempts.concatMap(attempt -> Mono.delay(STOP_RETRY, timer)))
                .then(Mono.never());
    }

    private Mono<Rung> terminate(ChildProcess child, List<ProcessHandle> snapshot) {
        List<ProcessHandle> tree = withCurrentDescendants(child, snapshot);
        tree.forEach(ProcessHandle::destroy);
        return awaitGone(tree, properties.termGrace()).flatMap(gone -> gone ? Mono.just(Rung.TERM) : kill(child, tree));
    }

    private Mono<Rung> kill(ChildProcess child, List<ProcessHandle> snapshot) {
        List<ProcessHandle> tree = withCurrentDescendants(child, snapshot);
        tree.forEach(ProcessHandle::destroyForcibly);
        return awaitGone(tree, properties.killGrace()).thenReturn(Rung.KILL);
    }

    /**
     * Removes the child's container. A {@code docker run} client signalled while it was creating its container may
     * have asked for it already without the engine having made it: when a signalled teardown found nothing to
     * remove, look once more a moment later rather than leave it to the periodic reaper. A client that exited by
     * itself (EOF, stop) saw its container through.
     */
    private Mono<Boolean> removeContainer(ChildProcess child, Rung rung) {
        return child.containerName()
                .map(name -> remove(child, name).flatMap(removed -> removed || !signalled(rung) ? Mono.just(removed)
                        : Mono.delay(CONTAINER_RECHECK, timer).then(remove(child, name))))
                .orElseGet(() -> Mono.just(false));
    }

    private static boolean signalled(Rung rung) {
        return rung == Rung.TERM || rung == Rung.KILL;
    }

    private Mono<Boolean> remove(ChildProcess child, String name) {
        return containers.removeContainerOf(child.spec()).onErrorResume(error -> {
            log.warn("{}: could not remove container {}: {}", child, name, error.toString());
            return Mono.just(false);
        });
    }

    /** True once every process of the tree has exited, false when the grace runs out first. */
    private Mono<Boolean> awaitGone(List<ProcessHandle> tree, Duration grace) {
        return Flux.fromIterable(tree)
                .flatMap(handle -> Mono.firstWithSignal(Mono.fromFuture(handle.onExit(), true).then(), zombie(handle)))
                .then(Mono.just(true))
                .timeout(grace, Mono.just(false), timer);
    }

    /**
     * Completes once the process is a zombie: dead, only not yet collected. An orphan's zombie waits for init,
     * which may collect late (or never, with the daemon as PID 1 in a container), and Java counts it alive.
     */
    private Mono<Void> zombie(ProcessHandle handle) {
        return Flux.interval(ZOMBIE_POLL, timer).filter(tick -> isZombie(handle.pid())).next().then();
    }

    private static List<ProcessHandle> withCurrentDescendants(ChildProcess child, List<ProcessHandle> snapshot) {
        Set<ProcessHandle> tree = new LinkedHashSet<>(snapshot);
        tree.addAll(child.tree());
        return new ArrayList<>(tree);
    }

    private static List<Long> survivors(List<ProcessHandle> tree) {
        return tree.stream().filter(handle -> handle.isAlive() && !isZombie(handle.pid())).map(ProcessHandle::pid).toList();
    }

    static boolean isZombie(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            // The state follows the command name, which is in parentheses and may itself hold spaces.
            int end = stat.lastIndexOf(')');
            return end > 0 && end + 2 < stat.length() && stat.charAt(end + 2) == 'Z';
        }
        catch (IOException | RuntimeException gone) {
            return false;
        }
    }
}
