package dev.tether.process;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * How a child's teardown ended.
 *
 * @param childId          the child
 * @param rung             the last rung of the ladder that was needed
 * @param exitCode         the child's exit code, if it could be read
 * @param containerRemoved true when the last rung found and removed a container
 * @param survivors        pids of the tree still alive after SIGKILL and its grace; empty unless the OS misbehaves
 * @param took             from the start of teardown until the tree was gone and the container removed
 */
public record TeardownReport(String childId, Rung rung, Optional<Integer> exitCode, boolean containerRemoved,
        List<Long> survivors, Duration took) {

    /** The rungs of the teardown ladder, in the order they are climbed. */
    public enum Rung {
        /** The child exited after its stdin was closed. */
        EOF,
        /** A {@code docker run} child exited by itself after its container was stopped through the engine. */
        STOP,
        /** The tree exited after SIGTERM. */
        TERM,
        /** The tree had to be killed with SIGKILL. */
        KILL;

        public String tag() {
            return name().toLowerCase();
        }
    }

    public TeardownReport {
        survivors = List.copyOf(survivors);
    }
}
