package dev.tether.liveness;

import java.io.PrintStream;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Hooks;
import reactor.core.scheduler.Schedulers;

/**
 * Ends the process when the JVM runs out of memory outside an execution's code (which GraalJS turns into the code's
 * own error), with one line that says so: a daemon whose threads died of it answers some routes and not others, and
 * a supervisor restarts a process that ended. The ledger and the reaper make the restart safe. It hooks where such
 * an error surfaces: a thread's uncaught exception, Reactor's dropped errors and scheduler task failures.
 */
@Component
final class OutOfMemoryExit {

    /** The exit status: EX_SOFTWARE of sysexits.h. */
    static final int STATUS = 70;

    OutOfMemoryExit() {
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((thread, error) -> {
            exitIfOutOfMemory(thread, error);
            if (previous != null) {
                previous.uncaughtException(thread, error);
            }
        });
        Hooks.onErrorDropped(error -> exitIfOutOfMemory(Thread.currentThread(), error));
        Schedulers.onHandleError(OutOfMemoryExit.class.getName(), OutOfMemoryExit::exitIfOutOfMemory);
    }

    static void exitIfOutOfMemory(Thread thread, Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof OutOfMemoryError oom) {
                PrintStream err = System.err;
                err.println("tether: out of memory on thread " + thread.getName() + " (" + oom.getMessage()
                        + "): the daemon exits so that its supervisor restarts it");
                err.flush();
                Runtime.getRuntime().halt(STATUS);
            }
        }
    }
}
