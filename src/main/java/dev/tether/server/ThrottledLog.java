package dev.tether.server;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;

/**
 * Warns at most once a second, each line with how many were not logged since the last one: a flood of closed or shed
 * connections must not flood the log.
 */
final class ThrottledLog {

    private final Logger log;
    private final AtomicLong nextLine = new AtomicLong(System.nanoTime());
    private final AtomicLong unlogged = new AtomicLong();

    ThrottledLog(Logger log) {
        this.log = log;
    }

    void warn(String format, Object... arguments) {
        long now = System.nanoTime();
        long next = nextLine.get();
        if (now - next >= 0 && nextLine.compareAndSet(next, now + TimeUnit.SECONDS.toNanos(1))) {
            long others = unlogged.getAndSet(0);
            log.warn(format + (others > 0 ? " (and " + others + " more since the last such line)" : ""), arguments);
        }
        else {
            unlogged.incrementAndGet();
        }
    }
}
