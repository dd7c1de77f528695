package dev.tether.process;

import java.util.Optional;

/** What other packages may know of operating-system processes by id: this daemon's own, its parent's, and whether one lives. */
public final class Pids {

    private Pids() {
    }

    public static long self() {
        return ProcessHandle.current().pid();
    }

    /** The executable this daemon runs as, when the OS tells. */
    public static Optional<String> selfCommand() {
        return ProcessHandle.current().info().command();
    }

    /** The process that started this daemon, while it lives (the desktop app, for its sidecar). */
    public static Optional<Long> parent() {
        return ProcessHandle.current().parent().map(ProcessHandle::pid);
    }

    public static boolean alive(long pid) {
        return pid > 0 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }
}
