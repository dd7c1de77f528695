package dev.tether.daemon;

import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.web.server.PortInUseException;

/**
 * Tether cannot start, for a reason an operator can fix: its message is one line naming what is wrong (a path, a
 * setting) and never quotes a secret. The application's {@code main} prints that line alone and exits non-zero,
 * without a stack trace.
 */
public final class StartupFailure extends RuntimeException {

    public StartupFailure(@Nullable String message) {
        // No cause is kept: a wrapped exception could quote a value, and would bring its stack trace back.
        super(message, null, false, false);
    }

    /**
     * The failure in {@code error}'s cause chain, if Tether's start failed for such a reason. A port in use is one
     * too: its line says "address already in use", the words the Executor desktop app looks for in its sidecar's
     * stderr to tell the user to pick another port.
     */
    public static Optional<StartupFailure> in(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (e instanceof StartupFailure failure) {
                return Optional.of(failure);
            }
            if (e instanceof PortInUseException inUse) {
                return Optional.of(new StartupFailure("port " + inUse.getPort()
                        + " is in use (EADDRINUSE: address already in use): stop what listens there or choose another"
                        + " port (server.port, EXECUTOR_PORT for bin/executor-sidecar)"));
            }
        }
        return Optional.empty();
    }
}
