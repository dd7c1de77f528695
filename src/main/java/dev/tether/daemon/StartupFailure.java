package dev.tether.daemon;

import java.util.Optional;
import dev.tether.TetherApplication;

/**
 * Tether cannot start, for a reason an operator can fix: its message is one line naming what is wrong (a path, a
 * setting) and never quotes a secret. {@link TetherApplication#main} prints that line alone and exits non-zero,
 * without a stack trace.
 */
public final class StartupFailure extends RuntimeException {

    public StartupFailure(String message) {
        // No cause is kept: a wrapped exception could quote a value, and would bring its stack trace back.
        super(message, null, false, false);
    }

    /** The failure in {@code error}'s cause chain, if Tether's start failed for such a reason. */
    public static Optional<StartupFailure> in(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (e instanceof StartupFailure failure) {
                return Optional.of(failure);
            }
        }
        return Optional.empty();
    }
}
