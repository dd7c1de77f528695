package dev.tether.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * When a process started, as the child ledger records it: a pid is reused, a pid together with its start is not, so
 * the next daemon acts on a ledger entry only while the start of the process now holding its pid is the recorded one.
 *
 * <p>On Linux this is the kernel's own record, {@link Kernel}, compared exactly. Not the instant Java gives: Java
 * places a start at the kernel's ticks since boot plus the boot time, which {@code /proc/stat} derives from the wall
 * clock in whole seconds and Java reads once per JVM, so after the wall clock is stepped two JVMs place the same
 * process at different instants. A daemon and its successor saw one process a second apart and the successor left
 * every orphan running; NTP correcting a clock after boot, or {@code date -s}, can step it further than any slack.
 * Where there is no {@code /proc} (macOS, where the desktop app runs) Java's instant is all there is: {@link WallClock}.
 */
sealed interface ProcessStart {

    /** The start of a live process, as this OS can tell it; empty once the process is gone or when the OS does not say. */
    static Optional<ProcessStart> of(ProcessHandle process) {
        return Kernel.BOOT_ID == null ? WallClock.of(process) : Kernel.of(process.pid());
    }

    /**
     * Reads {@link #text()}. A bare number is a {@link WallClock}: the only form the ledger had before, so that what a
     * daemon killed before an upgrade left behind is still reaped after it.
     */
    static Optional<ProcessStart> parse(String text) {
        return text.startsWith(Kernel.PREFIX) ? Kernel.parse(text) : WallClock.parse(text);
    }

    /** The form of this start in a ledger line: no tabs, no line breaks. */
    String text();

    /** Whether {@code process}, which holds the pid this start was recorded for, is the process that started then. */
    boolean isStartOf(ProcessHandle process);

    /**
     * The kernel's start of a process: the boot it belongs to ({@code /proc/sys/kernel/random/boot_id}) and the clock
     * ticks from that boot to the process's start (field 22 of {@code /proc/<pid>/stat}). The ticks count on a clock
     * that no change of the wall clock moves, so every reader agrees on them; they restart with each boot, where the
     * first processes get much the same pids at much the same ticks, so an entry from before a reboot must not match.
     */
    record Kernel(String bootId, long ticks) implements ProcessStart {

        private static final String PREFIX = "kernel:";
        private static final @Nullable String BOOT_ID = readBootId();

        static Optional<ProcessStart> of(long pid) {
            String bootId = BOOT_ID;
            if (bootId == null) {
                return Optional.empty();
            }
            try {
                String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
                // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so count from the last ')';
                // the state is field 3, the start field 22.
                String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                return Optional.of(new Kernel(bootId, Long.parseLong(fields[22 - 3])));
            }
            catch (IOException | NumberFormatException | IndexOutOfBoundsException gone) {
                return Optional.empty();
            }
        }

        static Optional<ProcessStart> parse(String text) {
            String[] parts = text.split(":", -1);
            if (parts.length != 3 || parts[1].isEmpty()) {
                return Optional.empty();
            }
            try {
                long ticks = Long.parseLong(parts[2]);
                return ticks < 0 ? Optional.empty() : Optional.of(new Kernel(parts[1], ticks));
            }
            catch (NumberFormatException ex) {
                return Optional.empty();
            }
        }

        @Override
        public String text() {
            return PREFIX + bootId + ":" + ticks;
        }

        @Override
        public boolean isStartOf(ProcessHandle process) {
            return of(process.pid()).map(this::equals).orElse(false);
        }

        private static @Nullable String readBootId() {
            try {
                String bootId = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
                return bootId.isEmpty() ? null : bootId;
            }
            catch (IOException notLinux) {
                return null;
            }
        }
    }

    /** Java's start instant of a process, where the kernel's own start cannot be read. */
    record WallClock(Instant instant) implements ProcessStart {

        /**
         * How far apart two JVMs may place one process's start: one second at least, as they can read the boot time
         * either side of a second's boundary (see {@link ProcessStart}). A reused pid would need the pid space to wrap
         * within this slack.
         */
        private static final Duration SLACK = Duration.ofMillis(1_500);

        static Optional<ProcessStart> of(ProcessHandle process) {
            return process.info().startInstant().map(WallClock::new);
        }

        static Optional<ProcessStart> parse(String text) {
            try {
                return Optional.of(new WallClock(Instant.ofEpochMilli(Long.parseLong(text))));
            }
            catch (NumberFormatException ex) {
                return Optional.empty();
            }
        }

        @Override
        public String text() {
            return Long.toString(instant.toEpochMilli());
        }

        @Override
        public boolean isStartOf(ProcessHandle process) {
            return process.info().startInstant()
                    .map(seen -> Duration.between(seen, instant).abs().compareTo(SLACK) <= 0)
                    .orElse(false);
        }
    }
}
