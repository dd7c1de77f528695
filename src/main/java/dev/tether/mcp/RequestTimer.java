package dev.tether.mcp;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * The timer of MCP request bounds ({@code Mono.timeout(bound, RequestTimer.SHARED)}). Every request arms a bound
 * and nearly every bound is cancelled a millisecond later. On Reactor's parallel scheduler each arming of an empty
 * queue wakes a timer thread, which on two cores costs the request about a tenth of a millisecond
 * (docs/performance.md); on a hashed wheel arming and cancelling are queue inserts, and one thread ticks ten
 * times a second. Bounds fire up to a tick late, which no bound of seconds notices.
 *
 * <p>Only timed tasks: this is not a place to run work, and {@link #schedule(Runnable)} and {@link #createWorker()}
 * refuse.
 */
public final class RequestTimer implements Scheduler {

    public static final RequestTimer SHARED = new RequestTimer();

    private static final long TICK_MILLIS = 100;

    private final HashedWheelTimer wheel;

    private RequestTimer() {
        ThreadFactory daemon = task -> {
            Thread thread = new Thread(task, "tether-request-timer");
            thread.setDaemon(true);
            return thread;
        };
        wheel = new HashedWheelTimer(daemon, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Refused: work run here would wait for the next tick and hold up every bound behind it. */
    @Override
    public Disposable schedule(Runnable task) {
        throw new RejectedExecutionException("RequestTimer arms request bounds only; run work on a Reactor scheduler");
    }

    /**
     * The wheel keeps a cancelled timeout until its next tick. Holding the task through a reference that
     * cancelling clears keeps the request's whole pipeline from living that long: on a small young generation it
     * would be promoted, and the old generation grew to the heap's maximum under load (661 MiB of RSS against 189).
     */
    @Override
    public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        AtomicReference<@Nullable Runnable> armed = new AtomicReference<>(task);
        Timeout timeout = wheel.newTimeout(ignored -> {
            Runnable due = armed.getAndSet(null);
            if (due != null) {
                due.run();
            }
        }, delay, unit);
        return new Disposable() {
            @Override
            public void dispose() {
                armed.set(null);
                timeout.cancel();
            }

            @Override
            public boolean isDisposed() {
                return armed.get() == null;
            }
        };
    }

    @Override
    public Worker createWorker() {
        throw new RejectedExecutionException("RequestTimer arms request bounds only; run work on a Reactor scheduler");
    }

    @Override
    public void dispose() {
        wheel.stop();
    }
}
