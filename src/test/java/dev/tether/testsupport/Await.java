package dev.tether.testsupport;

import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Bounded polling in real time, for conditions only the OS or a child's output can tell. */
public final class Await {

    private static final Duration POLL = Duration.ofMillis(20);

    private Await() {
    }

    /** Polls until {@code condition} holds; fails after {@code bound} with {@code what} and the time waited. */
    public static void until(BooleanSupplier condition, Duration bound, Supplier<String> what) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("not within " + bound + ": " + what.get());
            }
            pause(POLL);
        }
    }

    /** Sleeps in real time, for letting a signal that should not have been sent show that it was not. */
    public static void pause(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            fail("interrupted");
        }
    }

    /** What is left of {@code bound} since {@code startNanos} (a {@link System#nanoTime()}); zero when spent. */
    public static Duration remaining(long startNanos, Duration bound) {
        Duration left = bound.minusNanos(System.nanoTime() - startNanos);
        return left.isNegative() ? Duration.ZERO : left;
    }
}
