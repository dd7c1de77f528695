package dev.tether.testsupport;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * What the operating system says about processes, independent of anything Tether records:
 * read from {@code /proc} on Linux, from {@link ProcessHandle} elsewhere. A zombie (state
 * {@code Z}, or {@code X}) has already exited and counts as gone.
 */
public final class OsProcesses {

    private static final Path PROC = Path.of("/proc");
    private static final boolean HAS_PROC = Files.isDirectory(PROC.resolve("self"));
    private static final Duration POLL = Duration.ofMillis(50);

    private OsProcesses() {
    }

    /** Whether {@code pid} is a live process (not a zombie). */
    public static boolean alive(long pid) {
        if (!HAS_PROC) {
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        }
        String stat = stat(pid);
        if (stat == null) {
            return false;
        }
        // "pid (comm) S ppid ...": comm may hold spaces and parentheses, so look after the last ')'
        int close = stat.lastIndexOf(')');
        char state = close > 0 && close + 2 < stat.length() ? stat.charAt(close + 2) : '?';
        return state != 'Z' && state != 'X';
    }

    /**
     * CPU time {@code pid} has used so far, all its threads, user and system, as the kernel counts it; zero once it
     * is gone. Not its children's.
     */
    public static Duration cpuTime(long pid) {
        String stat = stat(pid);
        return stat == null ? Duration.ZERO : cpuTimeOfStat(stat);
    }

    /**
     * When {@code pid} started, in clock ticks since boot (field 22 of {@code /proc/PID/stat}), as the kernel counts it:
     * read here apart from the code that records it, for tests to check that code against.
     */
    public static long startTicks(long pid) {
        String stat = stat(pid);
        if (stat == null) {
            throw new IllegalStateException("no process " + pid);
        }
        return Long.parseLong(fieldsAfterCommand(stat)[22 - 3]);
    }

    /** The CPU time, user and system, of a {@code /proc/PID/stat} or {@code /proc/PID/task/TID/stat} line. */
    public static Duration cpuTimeOfStat(String stat) {
        // utime and stime, fields 14 and 15, in clock ticks (100 per second on Linux)
        String[] fields = fieldsAfterCommand(stat);
        return Duration.ofMillis((Long.parseLong(fields[14 - 3]) + Long.parseLong(fields[15 - 3])) * 10);
    }

    /** A stat line's fields from the state (field 3) on: the command name before them may hold spaces and parentheses. */
    private static String[] fieldsAfterCommand(String stat) {
        return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    }

    /** Live processes (this JVM excluded) whose command line contains {@code commandLineFragment}. */
    public static List<ProcessHandle> matching(String commandLineFragment) {
        long self = ProcessHandle.current().pid();
        return ProcessHandle.allProcesses()
                .filter(p -> p.pid() != self)
                .filter(p -> commandLine(p.pid()).contains(commandLineFragment))
                .filter(p -> alive(p.pid()))
                .collect(Collectors.toList());
    }

    /** Polls until none of {@code pids} is alive; fails after {@code bound}, naming the survivors. */
    public static void awaitGone(Collection<Long> pids, Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            List<Long> survivors = pids.stream().filter(OsProcesses::alive).collect(Collectors.toList());
            if (survivors.isEmpty()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                fail(survivors.size() + " process(es) still alive after " + bound + ": " + survivors.stream()
                        .map(OsProcesses::describe).collect(Collectors.joining("; ")));
            }
            sleep();
        }
    }

    /** Polls until no live process's command line contains the fragment; fails after {@code bound}. */
    public static void awaitNoneMatching(String commandLineFragment, Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            List<ProcessHandle> survivors = matching(commandLineFragment);
            if (survivors.isEmpty()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                fail(survivors.size() + " process(es) matching '" + commandLineFragment + "' still alive after "
                        + bound + ": " + survivors.stream().map(p -> describe(p.pid()))
                        .collect(Collectors.joining("; ")));
            }
            sleep();
        }
    }

    /** The process's command line, arguments joined by spaces; empty if unknown or gone. */
    public static String commandLine(long pid) {
        try {
            byte[] raw = Files.readAllBytes(PROC.resolve(Long.toString(pid)).resolve("cmdline"));
            return new String(raw, StandardCharsets.UTF_8).replace('\0', ' ').trim();
        } catch (IOException | SecurityException e) {
            return ProcessHandle.of(pid).flatMap(p -> p.info().commandLine()).orElse("");
        }
    }

    /** "pid 123 (state S, ppid 1): node /x/fixture-mcp-server.js --ignore-eof", for failure messages. */
    public static String describe(long pid) {
        String stat = stat(pid);
        String detail = "";
        if (stat != null) {
            String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            detail = " (state " + after[0] + ", ppid " + after[1] + ")";
        }
        return "pid " + pid + detail + ": " + commandLine(pid);
    }

    /** Stops a server a test started: SIGTERM, then SIGKILL when it has not exited within ten seconds. */
    public static void stop(Process process) {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static String stat(long pid) {
        try {
            return Files.readString(PROC.resolve(Long.toString(pid)).resolve("stat"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null; // no such process, or it went away while we read
        }
    }

    private static void sleep() {
        try {
            Thread.sleep(POLL.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted while waiting for processes to go");
        }
    }
}
