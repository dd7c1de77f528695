package dev.tether.http;

/** A request to an upstream that got no usable answer: it could not connect, timed out, or answered too much. */
public final class UpstreamException extends RuntimeException {

    public UpstreamException(String message, Throwable cause) {
        super(message, cause);
    }

    public UpstreamException(String message) {
        super(message);
    }
}
