package dev.tether.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lowers the scheduling priority of threads, on Linux (to nice 19 for executions' code by default). Code that loops
 * for ever then takes the CPU only when the daemon's own threads (HTTP, children, teardown) leave it: 36 loops on
 * two cores do not slow a health check. Java cannot set a thread's nice value itself (its thread priorities are
 * ignored on Linux unless the JVM is started with {@code -XX:ThreadPriorityPolicy=1}, which warns on every start),
 * so this asks {@code renice} once per thread; where that is not possible the thread keeps its priority.
 */
public final class Niceness {

    private static final Logger log = LoggerFactory.getLogger(Niceness.class);
    private static final Path THREAD_SELF = Path.of("/proc/thread-self");
    private static volatile boolean warned;

    private Niceness() {
    }

    /** Daemon threads named {@code prefix}N that run at nice {@code nice} (0 leaves them as they are). */
    public static ThreadFactory threads(String prefix, int nice) {
        AtomicInteger ids = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(() -> {
                if (nice > 0) {
                    lower(nice);
                }
                task.run();
            }, prefix + ids.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    static void lower(int nice) {
        if (!Files.isSymbolicLink(THREAD_SELF)) {
            return; // not Linux
        }
        try {
            // /proc/thread-self -> <pid>/task/<tid>
            String tid = Files.readSymbolicLink(THREAD_SELF).getFileName().toString();
            Process renice = new ProcessBuilder("renice", "-n", Integer.toString(nice), "-p", tid).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!renice.waitFor(5, TimeUnit.SECONDS)) {
                renice.destroyForcibly();
            }
            else if (renice.exitValue() != 0) {
                warnOnce("renice exited with " + renice.exitValue());
            }
        }
        catch (IOException ex) {
            warnOnce(ex.toString());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static void warnOnce(String why) {
        if (!warned) {
            warned = true;
            log.warn("execution threads keep the daemon's priority ({}): looping code competes with it for the CPU", why);
        }
    }
}
