package dev.tether.execution;

import java.lang.management.ManagementFactory;

import org.jspecify.annotations.Nullable;

/**
 * What an execution's code allocated on the heap, counted by the JVM per thread: the entries that ended, plus the
 * one running now on whichever thread runs it. Garbage counts too: it is the measure of what the code asked of the
 * heap, which {@link MemoryWatch} compares when the heap is under pressure.
 */
final class Allocations {

    private static final com.sun.management.@Nullable ThreadMXBean THREADS = threads();

    private long ended;
    private long runner = -1;
    private long start;

    private static com.sun.management.@Nullable ThreadMXBean threads() {
        if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean counted
                && counted.isThreadAllocatedMemorySupported()) {
            counted.setThreadAllocatedMemoryEnabled(true);
            return counted;
        }
        return null;
    }

    /** Whether this JVM counts allocations per thread (HotSpot and its kin do). */
    static boolean supported() {
        return THREADS != null;
    }

    synchronized void entered() {
        if (THREADS != null) {
            runner = Thread.currentThread().getId();
            start = THREADS.getCurrentThreadAllocatedBytes();
        }
    }

    synchronized void left() {
        if (THREADS != null && runner >= 0) {
            ended += Math.max(0, THREADS.getCurrentThreadAllocatedBytes() - start);
            runner = -1;
        }
    }

    /** Bytes allocated so far, the running entry included. */
    synchronized long total() {
        if (THREADS == null || runner < 0) {
            return ended;
        }
        long now = THREADS.getThreadAllocatedBytes(runner);
        return ended + Math.max(0, now - start);
    }
}
