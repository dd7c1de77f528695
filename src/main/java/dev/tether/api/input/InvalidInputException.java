package dev.tether.api.input;

import org.jspecify.annotations.Nullable;

/** A request that cannot be served as sent; the message names the offending field. */
public final class InvalidInputException extends RuntimeException {

    /** Tether's own tag for input that a route of Executor 1.5.9 declares no 400 for. */
    public static final String DECODE = "HttpApiDecodeError";

    private final String tag;

    InvalidInputException(String tag, @Nullable String message) {
        super(message);
        this.tag = tag;
    }

    public static InvalidInputException decode(@Nullable String message) {
        return new InvalidInputException(DECODE, message);
    }

    public static InvalidInputException connection(String message) {
        return new InvalidInputException("InvalidConnectionInputError", message);
    }

    public String tag() {
        return tag;
    }
}
