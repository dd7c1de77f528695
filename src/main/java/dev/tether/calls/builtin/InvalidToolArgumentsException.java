package dev.tether.calls.builtin;

import org.jspecify.annotations.Nullable;

/**
 * Arguments that a built-in cannot take. For one of the code runtime's helpers Executor throws this message into
 * the code; for a listed built-in it answers {@code {ok: false, error: {code: "invalid_tool_arguments"}}}.
 */
public final class InvalidToolArgumentsException extends RuntimeException {

    public InvalidToolArgumentsException(@Nullable String message) {
        super(message);
    }
}
