package dev.tether.openapi;

import org.jspecify.annotations.Nullable;

/** A spec that cannot be read: not JSON or YAML, not OpenAPI, too large, or with a {@code $ref} out of the document. */
public final class OpenApiParseException extends RuntimeException {

    public OpenApiParseException(@Nullable String message) {
        super(message);
    }

    public OpenApiParseException(@Nullable String message, Throwable cause) {
        super(message, cause);
    }
}
