package dev.tether.process;

import static dev.tether.process.RealChildren.awaitStderr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.process.TeardownReport.Rung;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.LifecycleGuard.Launch;
import dev.tether.testsupport.OsProcesses;

/**
 * The three ways to stop a child: {@code dispose()} and {@code disposeLater()} start the ladder once however often
 * they are called, cancelling a {@code disposeLater()} subscriber stops the waiting and not the teardown, and
 * {@code disposeNow(Duration)} says what did not stop in time. The ladder's graces run in virtual time.
 */
class ChildProcessDisposeTest {

    private static final ProcessProperties GRACES = ProcessProperties.defaults();
    private static final Duration BOUND = Duration.ofSeconds(20);

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    private final AtomicReference<TeardownLadder> ladder = new AtomicReference<>();

    @Test
    void teardownClimbsTheLadderOnceHoweverOftenItIsAskedFor() {
        AtomicInteger climbs = new AtomicInteger();
        Launch launch = guard.plain("--ignore-eof");
        ChildProcess child = RealChildren.start(guard, launch,
                c -> ladder.get().climb(c).doOnSubscribe(subscription -> climbs.incrementAndGet()));
        launch.awaitHostPids(1, BOUND);

        StepVerifier.withVirtualTime(() -> {
                    ladder.set(new TeardownLadder(GRACES, ContainerRemover.NONE, VirtualTimeScheduler.get()));
                    Mono<TeardownReport> first = child.disposeLater();
                    child.dispose();
                    Mono<TeardownReport> second = child.disposeLater();
                    child.release("released again");
                    return Mono.zip(first, second, child.onDispose());
                })
                .expectSubscription()
                .then(() -> awaitStderr(child, "staying alive (--ignore-eof)"))
                .thenAwait(GRACES.eofGrace())
                .assertNext(reports -> {
                    assertSame(reports.getT1(), reports.getT2(), "every caller sees the one teardown");
                    assertSame(reports.getT1(), reports.getT3());
                    assertEquals(Rung.TERM, reports.getT1().rung());
                })
                .expectComplete()
                .verify(BOUND);
        assertEquals(1, climbs.get(), "ladder climbs");
        assertTrue(child.isDisposed());
        assertEquals("disposed", child.teardownReason(), "the first release names the teardown");
    }

    @Test
    void cancellingTheDisposeLaterSubscriberDoesNotCancelTheTeardown() {
        AtomicReference<PublisherProbe<TeardownReport>> teardown = new AtomicReference<>();
        Launch launch = guard.plain("--ignore-eof");
        ChildProcess child = RealChildren.start(guard, launch, c -> {
            teardown.set(PublisherProbe.of(ladder.get().climb(c)));
            return teardown.get().mono();
        });
        launch.awaitHostPids(1, BOUND);

        StepVerifier.withVirtualTime(() -> {
                    ladder.set(new TeardownLadder(GRACES, ContainerRemover.NONE, VirtualTimeScheduler.get()));
                    Disposable impatient = child.disposeLater().subscribe(report -> { }, error -> { });
                    impatient.dispose();
                    return child.onDispose();
                })
                .expectSubscription()
                .then(() -> awaitStderr(child, "staying alive (--ignore-eof)"))
                .thenAwait(GRACES.eofGrace())
                .assertNext(report -> assertEquals(Rung.TERM, report.rung()))
                .expectComplete()
                .verify(BOUND);
        teardown.get().assertWasSubscribed();
        teardown.get().assertWasNotCancelled();
        assertEquals(1, teardown.get().subscribeCount());
        assertFalse(OsProcesses.alive(child.pid()));
    }

    @Test
    void disposeNowSaysWhichChildDidNotStopInTime() {
        Launch launch = guard.plain("--ignore-eof", "--ignore-sigterm");
        ChildProcess child = RealChildren.start(guard, launch, c -> ladder.get().climb(c));
        launch.awaitHostPids(1, BOUND);

        StepVerifier.withVirtualTime(() -> {
                    ladder.set(new TeardownLadder(GRACES, ContainerRemover.NONE, VirtualTimeScheduler.get()));
                    return child.onDispose();
                })
                .expectSubscription()
                .then(() -> {
                    // Virtual time stands still, so the ladder cannot get past its first grace.
                    IllegalStateException late = assertThrows(IllegalStateException.class,
                            () -> child.disposeNow(Duration.ofMillis(300)));
                    assertEquals("child " + child.id() + " (pid " + child.pid() + ") was not torn down within PT0.3S",
                            late.getMessage());
                    assertTrue(OsProcesses.alive(child.pid()));
                })
                .thenAwait(GRACES.eofGrace().plus(GRACES.termGrace()))
                .assertNext(report -> {
                    assertEquals(Rung.KILL, report.rung());
                    assertEquals(List.of(), report.survivors());
                })
                .expectComplete()
                .verify(BOUND);
        assertSame(child.disposeNow(Duration.ofSeconds(1)), child.onDispose().block(Duration.ofSeconds(1)),
                "once torn down, disposeNow answers at once with the same report");
    }
}
