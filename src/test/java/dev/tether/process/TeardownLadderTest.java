package dev.tether.process;

import static dev.tether.process.RealChildren.awaitStderr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.process.TeardownReport.Rung;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.LifecycleGuard.Launch;
import dev.tether.testsupport.OsProcesses;

/**
 * The teardown ladder against real processes, with its grace periods in virtual time: each rung is reached
 * exactly when the graces before it have elapsed, never earlier, and a child that obeys a rung ends there.
 * Real time only passes for the processes to react to what they were sent, bounded by each verify.
 */
class TeardownLadderTest {

    /** The defaults: in virtual time they cost nothing. */
    private static final ProcessProperties GRACES = ProcessProperties.defaults();
    private static final Duration BOUND = Duration.ofSeconds(20);

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    /**
     * {@code withVirtualTime} swaps the factory Reactor makes schedulers with: threads made while it runs are virtual
     * and die with the test. The ladder's own threads must be real whichever test touches them first.
     */
    @BeforeAll
    static void theLaddersThreadsAreRealThreads() {
        assertFalse(ProcessThreads.TEARDOWN.isDisposed());
        assertFalse(ProcessThreads.SPAWN.isDisposed());
    }

    @Test
    void childThatExitsOnEofEndsAtRungEofWithoutWaitingForAnyGrace() {
        Launch launch = guard.plain();
        ChildProcess child = RealChildren.start(guard, launch, RealChildren::notReleased);
        launch.awaitHostPids(1, BOUND);

        StepVerifier.withVirtualTime(() -> ladder().climb(child))
                .assertNext(report -> {
                    assertEquals(Rung.EOF, report.rung());
                    assertEquals(Optional.of(0), report.exitCode());
                    assertEquals(Duration.ZERO, report.took(), "no grace period elapsed");
                    assertEquals(List.of(), report.survivors());
                    assertFalse(report.containerRemoved());
                })
                .expectComplete()
                .verify(BOUND);
        assertFalse(OsProcesses.alive(child.pid()));
    }

    @Test
    void childIgnoringEofIsStillAliveJustBeforeEofGraceAndGetsSigtermAtEofGrace() {
        Launch launch = guard.plain("--ignore-eof");
        ChildProcess child = RealChildren.start(guard, launch, RealChildren::notReleased);
        launch.awaitHostPids(1, BOUND);

        StepVerifier.withVirtualTime(() -> ladder().climb(child))
                .expectSubscription()
                .then(() -> awaitStderr(child, "staying alive (--ignore-eof)"))
                .expectNoEvent(GRACES.eofGrace().minusMillis(1))
                .then(() -> assertEquals(List.of(), launch.probe(child.pid(), BOUND), "no SIGTERM before eofGrace"))
                .thenAwait(Duration.ofMillis(1))
                .assertNext(report -> {
                    assertEquals(Rung.TERM, report.rung());
                    assertEquals(Optional.of(143), report.exitCode(), "the fixture's exit code on SIGTERM");
                    assertEquals(GRACES.eofGrace(), report.took());
                    assertEquals(List.of(), report.survivors());
                })
                .expectComplete()
                .verify(BOUND);
        assertFalse(OsProcesses.alive(child.pid()));
    }

    @Test
    void childIgnoringEofAndSigtermIsKilledAtEofGracePlusTermGrace() {
        Launch launch = guard.plain("--ignore-eof", "--ignore-sigterm");
        ChildProcess child = RealChildren.start(guard, launch, RealChildren::notReleased);
        launch.awaitHostPids(1, BOUND);

        StepVerifier.withVirtualTime(() -> ladder().climb(child))
                .expectSubscription()
                .then(() -> awaitStderr(child, "staying alive (--ignore-eof)"))
                .expectNoEvent(GRACES.eofGrace().minusMillis(1))
                .then(() -> assertEquals(List.of(), launch.probe(child.pid(), BOUND), "no SIGTERM before eofGrace"))
                .thenAwait(Duration.ofMillis(1))
                .then(() -> awaitStderr(child, "SIGTERM ignored"))
                .expectNoEvent(GRACES.termGrace().minusMillis(1))
                .then(() -> assertEquals(List.of("SIGTERM"), launch.probe(child.pid(), BOUND),
                        "one SIGTERM at eofGrace, and no SIGKILL before eofGrace + termGrace (it answered)"))
                .thenAwait(Duration.ofMillis(1))
                .assertNext(report -> {
                    assertEquals(Rung.KILL, report.rung());
                    assertEquals(Optional.of(137), report.exitCode(), "128 + SIGKILL");
                    assertEquals(GRACES.eofGrace().plus(GRACES.termGrace()), report.took());
                    assertEquals(List.of(), report.survivors());
                })
                .expectComplete()
                .verify(BOUND);
        assertFalse(OsProcesses.alive(child.pid()));
    }

    @Test
    void grandchildIsTerminatedAtEofGraceEvenThoughItsParentExitedOnEof() {
        // The parent obeys EOF; the grandchild it forked does not read stdin and keeps the tree alive.
        Launch launch = guard.plain("--fork-grandchild");
        ChildProcess child = RealChildren.start(guard, launch, RealChildren::notReleased);
        long grandchild = launch.awaitHostPids(2, BOUND).get(1);

        StepVerifier.withVirtualTime(() -> ladder().climb(child))
                .expectSubscription()
                .then(() -> OsProcesses.awaitGone(List.of(child.pid()), BOUND))
                .expectNoEvent(GRACES.eofGrace().minusMillis(1))
                .then(() -> assertEquals(List.of(), launch.probe(grandchild, BOUND),
                        "the orphaned grandchild lives on, unsignalled, until eofGrace"))
                .thenAwait(Duration.ofMillis(1))
                .assertNext(report -> {
                    assertEquals(Rung.TERM, report.rung());
                    assertEquals(Optional.of(0), report.exitCode(), "the parent itself exited on EOF");
                    assertEquals(GRACES.eofGrace(), report.took());
                    assertEquals(List.of(), report.survivors());
                })
                .expectComplete()
                .verify(BOUND);
        assertFalse(OsProcesses.alive(grandchild), OsProcesses.describe(grandchild));
    }

    @Test
    void grandchildIgnoringSigtermIsKilledAtEofGracePlusTermGraceEvenThoughItsParentExitedOnEof() {
        // The grandchild's stderr is lost once its parent exits (the JDK closes the pipe), so only the OS can
        // tell when each signal arrived.
        Launch launch = guard.plain("--fork-grandchild", "--ignore-sigterm");
        ChildProcess child = RealChildren.start(guard, launch, RealChildren::notReleased);
        long grandchild = launch.awaitHostPids(2, BOUND).get(1);
        RealChildren.awaitIdleInEventLoop(grandchild);

        StepVerifier.withVirtualTime(() -> ladder().climb(child))
                .expectSubscription()
                .then(() -> OsProcesses.awaitGone(List.of(child.pid()), BOUND))
                .expectNoEvent(GRACES.eofGrace())
                .expectNoEvent(GRACES.termGrace().minusMillis(1))
                .then(() -> assertEquals(List.of("SIGTERM"), launch.probe(grandchild, BOUND),
                        "SIGTERM at eofGrace did not end it, and no SIGKILL came early (it answered)"))
                .thenAwait(Duration.ofMillis(1))
                .assertNext(report -> {
                    assertEquals(Rung.KILL, report.rung());
                    assertEquals(Optional.of(0), report.exitCode(), "the parent itself exited on EOF");
                    assertEquals(GRACES.eofGrace().plus(GRACES.termGrace()), report.took());
                    assertEquals(List.of(), report.survivors());
                })
                .expectComplete()
                .verify(BOUND);
        assertFalse(OsProcesses.alive(grandchild), OsProcesses.describe(grandchild));
    }

    @Test
    void dockerChildIgnoringEofHasItsContainerStoppedAtEofGraceAndExitsWithoutASignalFromUs() {
        // The engine's stop ends the container; its client then exits by itself. Here the stand-in engine ends the
        // client as the real one's stop would, and records when it was asked.
        List<String> stops = new CopyOnWriteArrayList<>();
        AtomicReference<ChildProcess> started = new AtomicReference<>();
        ContainerRemover engine = new ContainerRemover() {
            @Override
            public Mono<Boolean> stopContainerOf(ChildSpec container, Duration grace) {
                return Mono.fromCallable(() -> {
                    stops.add(container.containerName().orElseThrow() + " t=" + grace + " at "
                            + VirtualTimeScheduler.get().now(TimeUnit.MILLISECONDS));
                    started.get().closeStdin();
                    ProcessHandle.of(started.get().pid()).ifPresent(ProcessHandle::destroy);
                    return true;
                });
            }

            @Override
            public Mono<Boolean> removeContainerOf(ChildSpec container) {
                return Mono.just(false); // --rm got there first
            }
        };
        Launch launch = guard.plain("--ignore-eof");
        ChildProcess child = RealChildren.start(guard, launch, Optional.of("tether-test-container"), RealChildren::notReleased);
        started.set(child);
        launch.awaitHostPids(1, BOUND);

        StepVerifier.withVirtualTime(() -> new TeardownLadder(GRACES, engine, VirtualTimeScheduler.get()).climb(child))
                .expectSubscription()
                .then(() -> awaitStderr(child, "staying alive (--ignore-eof)"))
                .expectNoEvent(GRACES.eofGrace().minusMillis(1))
                .then(() -> assertEquals(List.of(), stops, "no stop before eofGrace"))
                .thenAwait(Duration.ofMillis(1))
                .assertNext(report -> {
                    assertEquals(Rung.STOP, report.rung());
                    assertEquals(GRACES.eofGrace(), report.took(), "no recheck of the container: the client saw it through");
                    assertFalse(report.containerRemoved());
                })
                .expectComplete()
                .verify(BOUND);
        assertEquals(List.of("tether-test-container t=" + GRACES.termGrace() + " at " + GRACES.eofGrace().toMillis()), stops);
    }

    @Test
    void engineIsAskedAgainWhileItHasNoContainerYetAndTheClientIsSignalledAtTheStopGrace() {
        // The client is still asking for its container: the engine has none by that name to end yet. The EOF sent
        // may still arrive once the container runs, so the ladder keeps asking the engine, then signals.
        List<Long> stops = new CopyOnWriteArrayList<>();
        List<Long> removals = new CopyOnWriteArrayList<>();
        ContainerRemover engine = new ContainerRemover() {
            @Override
            public Mono<Boolean> stopContainerOf(ChildSpec container, Duration grace) {
                return Mono.fromCallable(() -> stops.add(VirtualTimeScheduler.get().now(TimeUnit.MILLISECONDS))).thenReturn(false);
            }

            @Override
            public Mono<Boolean> removeContainerOf(ChildSpec container) {
                return Mono.fromCallable(() -> removals.add(VirtualTimeScheduler.get().now(TimeUnit.MILLISECONDS))).thenReturn(false);
            }
        };
        AtomicInteger asked = new AtomicInteger();
        Launch launch = guard.plain("--ignore-eof");
        ChildProcess child = RealChildren.start(guard, launch, Optional.of("tether-test-container"), RealChildren::notReleased);
        launch.awaitHostPids(1, BOUND);
        long eof = GRACES.eofGrace().toMillis();

        StepVerifier.withVirtualTime(() -> new TeardownLadder(GRACES, engine, VirtualTimeScheduler.get()).climb(child))
                .expectSubscription()
                .then(() -> awaitStderr(child, "staying alive (--ignore-eof)"))
                .expectNoEvent(GRACES.eofGrace())
                .expectNoEvent(GRACES.dockerStopGrace().minusMillis(1))
                .then(() -> {
                    assertEquals(List.of(), launch.probe(child.pid(), BOUND), "no SIGTERM before eofGrace + dockerStopGrace");
                    assertEquals(eof, stops.get(0), "asked first at eofGrace");
                    assertEquals(eof + 250, stops.get(1), "then every 250 ms");
                    assertEquals(GRACES.dockerStopGrace().toMillis() / 250, stops.size());
                })
                .thenAwait(Duration.ofMillis(1))
                .then(() -> {
                    // SIGTERM ends it; the ladder then removes the container, and looks once more after the recheck delay.
                    OsProcesses.awaitGone(List.of(child.pid()), BOUND);
                    Await.until(() -> removals.size() == 1, BOUND, () -> "the first removal after SIGTERM: " + removals);
                })
                .thenAwait(Duration.ofSeconds(2))
                .assertNext(report -> {
                    assertEquals(Rung.TERM, report.rung());
                    assertEquals(Optional.of(143), report.exitCode());
                    assertEquals(2, removals.size(), "removed, then looked for once more: " + removals);
                })
                .then(() -> asked.set(stops.size()))
                .thenAwait(Duration.ofSeconds(10))
                .then(() -> assertEquals(asked.get(), stops.size(), "no more asking once the rung is over"))
                .expectComplete()
                .verify(BOUND);
    }

    @Test
    void plainChildIsNeverStoppedThroughTheEngine() {
        List<String> stops = new CopyOnWriteArrayList<>();
        ContainerRemover engine = new ContainerRemover() {
            @Override
            public Mono<Boolean> stopContainerOf(ChildSpec container, Duration grace) {
                stops.add(container.containerName().orElseThrow());
                return Mono.just(true);
            }

            @Override
            public Mono<Boolean> removeContainerOf(ChildSpec container) {
                return Mono.just(false);
            }
        };
        Launch launch = guard.plain("--ignore-eof");
        ChildProcess child = RealChildren.start(guard, launch, RealChildren::notReleased);
        launch.awaitHostPids(1, BOUND);

        StepVerifier.withVirtualTime(() -> new TeardownLadder(GRACES, engine, VirtualTimeScheduler.get()).climb(child))
                .expectSubscription()
                .then(() -> awaitStderr(child, "staying alive (--ignore-eof)"))
                .thenAwait(GRACES.eofGrace())
                .assertNext(report -> assertEquals(Rung.TERM, report.rung()))
                .expectComplete()
                .verify(BOUND);
        assertEquals(List.of(), stops);
    }

    @Test
    void containerIsRemovedAfterTheTreeIsGoneEvenWhenTheChildExitedCleanly() {
        List<String> removed = new CopyOnWriteArrayList<>();
        AtomicReference<ChildProcess> started = new AtomicReference<>();
        ContainerRemover remover = container -> Mono.fromCallable(() -> {
            removed.add(container.containerName().orElseThrow() + (started.get().isAlive() ? " while the child was alive" : ""));
            return true;
        });
        Launch launch = guard.plain();
        ChildProcess child = RealChildren.start(guard, launch, Optional.of("tether-test-container"),
                RealChildren::notReleased);
        started.set(child);
        launch.awaitHostPids(1, BOUND);

        StepVerifier.withVirtualTime(() -> new TeardownLadder(GRACES, remover, VirtualTimeScheduler.get()).climb(child))
                .assertNext(report -> {
                    assertEquals(Rung.EOF, report.rung());
                    assertTrue(report.containerRemoved());
                })
                .expectComplete()
                .verify(BOUND);
        assertEquals(List.of("tether-test-container"), removed);
    }

    @Test
    void failingContainerRemovalIsReportedNotThrown() {
        ContainerRemover broken = container -> Mono.error(new IllegalStateException("engine unreachable"));
        Launch launch = guard.plain();
        ChildProcess child = RealChildren.start(guard, launch, Optional.of("tether-test-container"),
                RealChildren::notReleased);
        launch.awaitHostPids(1, BOUND);

        StepVerifier.withVirtualTime(() -> new TeardownLadder(GRACES, broken, VirtualTimeScheduler.get()).climb(child))
                .assertNext(report -> {
                    assertEquals(Rung.EOF, report.rung());
                    assertFalse(report.containerRemoved());
                })
                .expectComplete()
                .verify(BOUND);
    }

    private static TeardownLadder ladder() {
        return new TeardownLadder(GRACES, ContainerRemover.NONE, VirtualTimeScheduler.get());
    }
}
