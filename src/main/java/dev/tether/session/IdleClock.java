package dev.tether.session;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.scheduler.Scheduler;

/**
 * When an idle session has idled {@code idle-ttl}. One timer per idle period, not one per lease: a release leaves an
 * armed clock armed, and when it rings it waits out the rest from the last release, or stays unarmed while the session
 * is in use until its next release.
 */
final class IdleClock {

    private final Scheduler timer;
    private final Duration ttl;
    private final BooleanSupplier idle;
    private final Runnable expired;
    private final Disposable.Swap ringing = Disposables.swap();
    private final AtomicBoolean armed = new AtomicBoolean();
    private volatile long lastReleased;

    /**
     * @param idle    whether the session is idle now
     * @param expired told once the session has idled {@code ttl} since its last release
     */
    IdleClock(Scheduler timer, Duration ttl, BooleanSupplier idle, Runnable expired) {
        this.timer = timer;
        this.ttl = ttl;
        this.idle = idle;
        this.expired = expired;
        this.lastReleased = timer.now(TimeUnit.MILLISECONDS);
    }

    /** The session idles from now: the clock is armed unless it already is (it then finds this later release). */
    void released() {
        lastReleased = timer.now(TimeUnit.MILLISECONDS);
        arm(ttl.toMillis());
    }

    long lastReleased() {
        return lastReleased;
    }

    void stop() {
        ringing.dispose();
    }

    private void arm(long delayMillis) {
        if (armed.compareAndSet(false, true)) {
            ringing.update(timer.schedule(this::rang, delayMillis, TimeUnit.MILLISECONDS));
        }
    }

    /** Disarmed first, so that a release racing this finds the clock free to arm. */
    private void rang() {
        armed.set(false);
        if (!idle.getAsBoolean()) {
            return;
        }
        long rest = ttl.toMillis() - (timer.now(TimeUnit.MILLISECONDS) - lastReleased);
        if (rest > 0) {
            arm(rest);
        }
        else {
            expired.run();
        }
    }
}
