package dev.tether.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lowers the scheduling priority of threads, on Linux (executions' code that runs long goes to nice 19). Code that
 * loops for ever then takes the CPU only when the daemon's own threads (HTTP, children, teardown) leave it: 36 loops
 * on two cores do not slow a health check. Java cannot set a thread's nice value itself (its thread priorities are
 * ignored on Linux unless the JVM is started with {@code -XX:ThreadPriorityPolicy=1}, which warns on every start),
 * so this asks {@code renice}; where that is not possible the thread keeps its priority. A lowered thread cannot be
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
     * Sets the nice value of the kernel thread {@code tid}. Not the {@code SCHED_IDLE} policy, tried: on a host busy
     * with other work, idle-policy threads got no CPU at all, and a new execution, which needs every thread running
     * code to answer a GraalJS handshake, waited over a minute for them. Starts {@code renice} and returns: dozens of
     * loops are lowered at once, not one spawn after another.
     */
    public static void lower(long tid, int nice) {
        start("renice", "-n", Integer.toString(nice), "-p", Long.toString(tid));
    }

    private static void start(String... command) {
        try {
            new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start()
                    .onExit().thenAccept(done -> {
                        if (done.exitValue() != 0) {
                            warnOnce(command[0] + " exited with " + done.exitValue());
                        }
                    });
        }
        catch (IOException ex) {
            warnOnce(ex.toString());
        }
    }

    private static void warnOnce(String why) {
        if (!warned) {
            warned = true;
            log.warn("execution threads keep the daemon's priority ({}): looping code competes with it for the CPU", why);
        }
    }
}
