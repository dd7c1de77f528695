package dev.tether.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The wheel that times MCP requests: a due bound runs once, a cancelled one never runs and lets go of its task at
 * once (the task holds a request's whole pipeline), and Reactor's {@code timeout} works on it. The wheel ticks in
 * real time; nothing here waits for a fixed time, only for a bound armed after the one under test.
 */
class RequestTimerTest {

    private static final Duration BOUND = Duration.ofSeconds(10);

    @Test
    void dueBoundRunsOnceAndACancelledOneNever() throws InterruptedException {
        AtomicInteger cancelledRan = new AtomicInteger();
        AtomicInteger dueRan = new AtomicInteger();
        CountDownLatch later = new CountDownLatch(1);

        Disposable cancelled = RequestTimer.SHARED.schedule(cancelledRan::incrementAndGet, 10, TimeUnit.MILLISECONDS);
        RequestTimer.SHARED.schedule(dueRan::incrementAndGet, 10, TimeUnit.MILLISECONDS);
        cancelled.dispose();
        RequestTimer.SHARED.schedule(later::countDown, 300, TimeUnit.MILLISECONDS);

        assertThat(later.await(BOUND.toSeconds(), TimeUnit.SECONDS)).as("a bound due later ran").isTrue();
        assertThat(dueRan).hasValue(1);
        assertThat(cancelledRan).as("cancelled before it was due").hasValue(0);
        assertThat(cancelled.isDisposed()).isTrue();
    }

    @Test
    void cancelledBoundLetsGoOfItsTaskBeforeTheWheelGetsToIt() {
        WeakReference<Object> held = armAndCancelABoundHolding(new byte[1 << 20]);

        // At once, not after the next tick (100 ms), when the wheel drops the cancelled bound anyway.
        for (int gc = 0; gc < 3 && held.get() != null; gc++) {
            System.gc();
        }
        assertThat(held.get()).as("the cancelled bound's task, still on the wheel").isNull();
    }

    /** Due in an hour, so the wheel still has the bound when the test looks. */
    private static WeakReference<Object> armAndCancelABoundHolding(Object pipeline) {
        RequestTimer.SHARED.schedule(pipeline::hashCode, 1, TimeUnit.HOURS).dispose();
        return new WeakReference<>(pipeline);
    }

    @Test
    void reactorTimeoutsRunOnIt() {
        StepVerifier.create(Mono.never().timeout(Duration.ofMillis(50), RequestTimer.SHARED))
                .expectError(TimeoutException.class)
                .verify(BOUND);
        StepVerifier.create(Mono.just("answer").timeout(Duration.ofMillis(50), RequestTimer.SHARED))
                .expectNext("answer")
                .verifyComplete();
    }

    @Test
    void runsNoWork() {
        assertThatThrownBy(RequestTimer.SHARED::createWorker).isInstanceOf(RejectedExecutionException.class);
        assertThatThrownBy(() -> RequestTimer.SHARED.schedule(() -> { })).isInstanceOf(RejectedExecutionException.class);
    }
}
