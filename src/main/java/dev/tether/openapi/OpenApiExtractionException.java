package dev.tether.openapi;

/** A spec that reads but gives no usable tools: no paths, or an operation whose inputs collide. */
public final class OpenApiExtractionException extends RuntimeException {

    public OpenApiExtractionException(String message) {
        super(message);
    }
}
