package dev.tether.mcp;

import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import dev.tether.docker.DockerRunRewriter;
import dev.tether.docker.InstanceId;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ContainerRemover;
import dev.tether.process.ProcessProperties;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.LifecycleGuard.Launch;
import dev.tether.testsupport.OsProcesses;

/**
 * The headline promise: cancel a session at any phase, whatever the server does with EOF and SIGTERM, and its
 * process tree is gone and its container removed. Each case drives {@link McpSessions#withSession}, waits for the
 * phase (from the fixture's {@code --record} file, or for the spawn phase the spawn counted in the registry the test
 * hands the daemon: only to know when to cancel), disposes the subscription, and then asks the OS and the Docker
 * engine, never Tether, whether anything is left. How soon is printed, not judged: the ladder's timing is
 * {@link dev.tether.process.TeardownLadderTest}'s, in virtual time; here a generous bound only says "stuck".
 *
 * <p>One window is not the ladder's alone: a client still creating its container when the stop rung's
 * {@code docker-stop-grace} runs out is signalled, and may die after it asked for the container and before the engine
 * made it, so the ladder's removal finds nothing and the container appears, never started, a moment later. The daemon's
 * periodic {@link dev.tether.docker.ContainerReaper} is what removes it, so the spawn-phase and random-instant
 * cases run one, as the daemon does (with a short interval), and allow its interval on top of the ladder's.
 *
 * <p>Subclasses run the same matrix on a plain child and inside {@code docker run -i --rm}.
 */
abstract class CancellationMatrix {

    /** Short graces keep the matrix fast; one case below runs with the defaults. */
    static final ProcessProperties SHORT_GRACES = new ProcessProperties(Duration.ofMillis(300), Duration.ofMillis(500),
            Duration.ofMillis(500), null, null);

    static final Duration PHASE_BOUND = Duration.ofSeconds(30);
    /** Added to the ladder's graces before the test calls a teardown stuck: process scheduling on a busy host, the engine. */
    static final Duration STUCK = Duration.ofSeconds(60);

    /** How a server reacts to the rungs of the ladder. */
    enum Behaviour {
        RESPECTS_EOF(),
        IGNORES_EOF("--ignore-eof"),
        IGNORES_EOF_AND_SIGTERM("--ignore-eof", "--ignore-sigterm"),
        FORKS_A_GRANDCHILD_AND_IGNORES_EOF_AND_SIGTERM("--fork-grandchild", "--ignore-eof", "--ignore-sigterm"),
        STARTS_SLOWLY("--slow-start=700");

        final List<String> flags;

        Behaviour(String... flags) {
            this.flags = List.of(flags);
        }

        @Override
        public String toString() {
            return name().toLowerCase().replace('_', ' ');
        }
    }

    /** Where in a session's life the subscription is disposed, and how the test knows it got there. */
    enum Phase {
        /** Right after fork/exec returned: node is booting, or the docker client is creating the container. */
        SPAWN,
        HANDSHAKE,
        TOOLS_LIST,
        TOOLS_CALL;

        void await(SpawnWatchingRegistry meters, Launch launch) {
            switch (this) {
                case SPAWN -> meters.awaitSpawn(PHASE_BOUND);
                case HANDSHAKE -> launch.awaitRecorded("initialize", PHASE_BOUND);
                case TOOLS_LIST -> launch.awaitRecorded("tools/list", PHASE_BOUND);
                case TOOLS_CALL -> launch.awaitRecorded("tools/call", PHASE_BOUND);
            }
        }
    }

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    private final SpawnWatchingRegistry meters = new SpawnWatchingRegistry();

    /** The fixture, as a plain child or in Docker. */
    abstract Launch launch(List<String> flags);

    /** What removes containers: the Docker engine, or nothing for plain children. */
    abstract ContainerRemover containers();

    /** Starts the daemon's reaper of orphaned containers over {@code children}; returns how to stop it. */
    abstract Disposable startReaper(ChildProcesses children, MeterRegistry registry);

    /** How often that reaper runs; zero where there are no containers. */
    abstract Duration reapInterval();

    @ParameterizedTest(name = "server that {0}")
    @EnumSource(Behaviour.class)
    void cancelWhileSpawningLeavesNothing(Behaviour behaviour) {
        cancelAt(Phase.SPAWN, behaviour, session -> session.callTool("hang", Map.of()), SHORT_GRACES);
    }

    @ParameterizedTest(name = "server that {0}")
    @EnumSource(Behaviour.class)
    void cancelDuringHandshakeLeavesNothing(Behaviour behaviour) {
        cancelAt(Phase.HANDSHAKE, behaviour, McpSession::ping, SHORT_GRACES, "--hang-on-initialize");
    }

    @ParameterizedTest(name = "server that {0}")
    @EnumSource(Behaviour.class)
    void cancelDuringToolsListLeavesNothing(Behaviour behaviour) {
        cancelAt(Phase.TOOLS_LIST, behaviour, McpSession::listTools, SHORT_GRACES, "--hang-on-list");
    }

    @ParameterizedTest(name = "server that {0}")
    @EnumSource(Behaviour.class)
    void cancelDuringToolsCallLeavesNothing(Behaviour behaviour) {
        cancelAt(Phase.TOOLS_CALL, behaviour, session -> session.callTool("hang", Map.of()), SHORT_GRACES);
    }

    @Test
    void cancelDuringToolsCallOfAServerIgnoringEofAndSigtermLeavesNothingWithDefaultGraces() {
        cancelAt(Phase.TOOLS_CALL, Behaviour.FORKS_A_GRANDCHILD_AND_IGNORES_EOF_AND_SIGTERM,
                session -> session.callTool("hang", Map.of()), ProcessProperties.defaults());
    }

    /**
     * Cancels at random instants, from right after subscribe (before or during the fork) to well into the
     * handshake, against a server that ignores EOF: whichever step each cancel lands in, nothing is left.
     */
    @Test
    void cancelAtRandomInstantsLeavesNothing() {
        ChildProcesses children = new ChildProcesses(SHORT_GRACES, guard.tether(), containers(), meters);
        McpSessions sessions = new McpSessions(children, new DockerRunRewriter(new InstanceId(guard.tether())),
                McpProperties.defaults());
        Disposable reaper = startReaper(children, meters);
        try {
            List<Launch> launches = new ArrayList<>();
            long[] delaysMicros = { 0, 100, 1_000, 5_000, 20_000, random(100_000), random(400_000), random(1_000_000) };
            for (long delay : delaysMicros) {
                Launch launch = launch(List.of("--ignore-eof"));
                launches.add(launch);
                Disposable subscription = sessions.withSession(StdioServer.of("fixture", launch.argv()),
                                session -> session.callTool("hang", Map.of()))
                        .subscribe(value -> { }, error -> { });
                LockSupport.parkNanos(delay * 1_000); // parked, not spinning: which instant it lands on is what varies
                subscription.dispose();
            }

            long cancelled = System.nanoTime();
            Duration bound = ladderBound(SHORT_GRACES).plus(reapInterval());
            OsProcesses.awaitNoneMatching(guard.marker(), Await.remaining(cancelled, bound));
            for (Launch launch : launches) {
                OsProcesses.awaitGone(launch.hostPids(), Await.remaining(cancelled, bound));
            }
            long processesGone = System.nanoTime();
            awaitNoContainer(launches.get(0), cancelled, bound);
            report("random instants (from the last cancel)", "ignores eof", cancelled, processesGone);
        }
        finally {
            reaper.dispose();
        }
    }

    private <T> void cancelAt(Phase phase, Behaviour behaviour, Function<McpSession, Mono<T>> body,
            ProcessProperties graces, String... phaseFlags) {
        List<String> flags = new ArrayList<>(behaviour.flags);
        flags.addAll(Arrays.asList(phaseFlags));
        Launch launch = launch(flags);
        ChildProcesses children = new ChildProcesses(graces, guard.tether(), containers(), meters);
        McpSessions sessions = new McpSessions(children, new DockerRunRewriter(new InstanceId(guard.tether())),
                McpProperties.defaults());
        // Only a cancel that can land while docker run creates the container needs the reaper (see above).
        Disposable reaper = phase == Phase.SPAWN ? startReaper(children, meters) : () -> { };
        try {
            AtomicReference<Object> ended = new AtomicReference<>();
            Disposable subscription = sessions.withSession(StdioServer.of("fixture", launch.argv()), body)
                    .subscribe(value -> ended.set("value " + value), ended::set,
                            () -> ended.compareAndSet(null, "completed"));
            phase.await(meters, launch);
            Set<Long> tree = snapshot(launch);
            assertNull(ended.get(), () -> "the session ended before it could be cancelled in phase " + phase + ": "
                    + ended.get());

            long cancelled = System.nanoTime();
            subscription.dispose();

            Duration bound = ladderBound(graces).plus(phase == Phase.SPAWN ? reapInterval() : Duration.ZERO);
            OsProcesses.awaitGone(tree, Await.remaining(cancelled, bound));
            // A plain fixture may write its pid file (with its grandchild) only after the cancel, in the spawn phase.
            OsProcesses.awaitGone(launch.hostPids(), Await.remaining(cancelled, bound));
            OsProcesses.awaitNoneMatching(guard.marker(), Await.remaining(cancelled, bound));
            long processesGone = System.nanoTime();
            awaitNoContainer(launch, cancelled, bound);
            report(phase.toString(), behaviour.toString(), cancelled, processesGone);
        }
        finally {
            reaper.dispose();
        }
    }

    private Duration ladderBound(ProcessProperties graces) {
        // Only docker children climb the stop rung.
        Duration stop = containers() == ContainerRemover.NONE ? Duration.ZERO : graces.dockerStopGrace();
        return graces.eofGrace().plus(stop).plus(graces.termGrace()).plus(graces.killGrace()).plus(STUCK);
    }

    private void awaitNoContainer(Launch launch, long cancelled, Duration bound) {
        if (launch.inDocker()) {
            DockerContainers.awaitNoneWithLabel(LifecycleGuard.INSTANCE_LABEL, guard.instanceId(),
                    Await.remaining(cancelled, bound));
            DockerContainers.awaitNoneWithLabel(LifecycleGuard.RUN_LABEL, guard.marker(),
                    Await.remaining(cancelled, bound));
        }
    }

    private void report(String phase, String behaviour, long cancelled, long processesGone) {
        double reaped = meters.find("tether.children.reaped").counters().stream().mapToDouble(c -> c.count()).sum();
        System.out.printf("[teardown] %s %s, %s: cancel -> processes gone %d ms, -> everything gone %d ms%s%n",
                getClass().getSimpleName(), phase, behaviour, (processesGone - cancelled) / 1_000_000,
                (System.nanoTime() - cancelled) / 1_000_000,
                reaped > 0 ? " (the reaper removed " + (long) reaped + " container(s) created after their teardown)" : "");
    }

    /** Every host process of this launch alive now, with its descendants (a plain fixture's grandchild included). */
    private Set<Long> snapshot(Launch launch) {
        Set<Long> pids = new LinkedHashSet<>(launch.hostPids());
        for (ProcessHandle handle : OsProcesses.matching(guard.marker())) {
            pids.add(handle.pid());
            handle.descendants().forEach(descendant -> pids.add(descendant.pid()));
        }
        return pids;
    }

    private static long random(long bound) {
        return ThreadLocalRandom.current().nextLong(bound);
    }
}
