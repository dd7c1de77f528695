package dev.tether.calls.builtin;

/**
 * Arguments that a built-in cannot take. For one of the code runtime's helpers Executor throws this message into
 * the code; for a listed built-in it answers {@code {ok: false, error: {code: "invalid_tool_arguments"}}}.
 */
public final class InvalidToolArgumentsException extends RuntimeException {

    public InvalidToolArgumentsException(String message) {
        super(message);
    }
}
