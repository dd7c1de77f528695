package dev.tether.session;

/** A cap of the session pool was reached (for leases: and the wait in line ran out); the request is refused. */
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
