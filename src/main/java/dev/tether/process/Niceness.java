package dev.tether.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lowers the scheduling priority of threads, on Linux (executions' code that runs long goes to nice 19). Code that
 * loops for ever then takes the CPU only when the daemon's own threads (HTTP, children, teardown) leave it: 36 loops
 * on two cores do not slow a health check. Java cannot set a thread's nice value itself (its thread priorities are
 * ignored on Linux unless the JVM is started with {@code -XX:ThreadPriorityPolicy=1}, which warns on every start),
 * so this asks {@code renice} (and {@code chrt}); where that is not possible the thread keeps its priority. A lowered thread cannot be
 * raised again without privilege, and a thread inherits its nice value from the thread that starts it.
 */
public final class Niceness {

    private static final Logger log = LoggerFactory.getLogger(Niceness.class);
    private static final Path THREAD_SELF = Path.of("/proc/thread-self");
    private static volatile boolean warned;

    private Niceness() {
    }

    /** The calling thread's id in the kernel, empty where there is none to renice (not Linux). */
    public static OptionalLong currentThreadId() {
        if (!Files.isSymbolicLink(THREAD_SELF)) {
            return OptionalLong.empty();
        }
        try {
            // /proc/thread-self -> <pid>/task/<tid>
            return OptionalLong.of(Long.parseLong(Files.readSymbolicLink(THREAD_SELF).getFileName().toString()));
        }
        catch (IOException | NumberFormatException ex) {
            warnOnce(ex.toString());
            return OptionalLong.empty();
        }
    }

    /**
     * Sets the nice value of the kernel thread {@code tid}, and at 19 also the {@code SCHED_IDLE} policy: a nice-19
     * thread still holds a core until the scheduler's next tick, whereas any waking thread of normal policy preempts
     * an idle-policy one at once, so a warm request beside 36 loops waits for nothing. Blocks for what it runs.
     */
    public static void lower(long tid, int nice) {
        run("renice", "-n", Integer.toString(nice), "-p", Long.toString(tid));
        if (nice == 19) {
            run("chrt", "--idle", "-p", "0", Long.toString(tid));
        }
    }

    private static void run(String... command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            else if (process.exitValue() != 0) {
                warnOnce(command[0] + " exited with " + process.exitValue());
            }
        }
        catch (IOException ex) {
            warnOnce(ex.toString());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** The nice value of the kernel thread {@code tid} of this process, empty where it cannot be read. */
    public static OptionalLong of(long tid) {
        try {
            String stat = Files.readString(Path.of("/proc/self/task/" + tid + "/stat"));
            // the command name, field 2, may hold spaces: count from its closing parenthesis; nice is field 19
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return OptionalLong.of(Long.parseLong(fields[16]));
        }
        catch (IOException | RuntimeException ex) {
            return OptionalLong.empty();
        }
    }

    private static void warnOnce(String why) {
        if (!warned) {
            warned = true;
            log.warn("execution threads keep the daemon's priority ({}): looping code competes with it for the CPU", why);
        }
    }
}
