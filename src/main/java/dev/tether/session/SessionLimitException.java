package dev.tether.session;

/** A cap of the session pool was reached; the request is refused rather than queued. */
public final class SessionLimitException extends RuntimeException {

    private final String limit;

    SessionLimitException(String limit, String message) {
        super(message);
        this.limit = limit;
    }

    /** The setting that was hit, e.g. {@code tether.session.max-sessions}. */
    public String limit() {
        return limit;
    }
}
