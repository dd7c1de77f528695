package dev.tether.oauth;

/** No authorization in flight has this {@code state}: it never existed, expired, was cancelled or already used. */
public final class OAuthSessionNotFoundException extends RuntimeException {

    private final String state;

    OAuthSessionNotFoundException(String state) {
        super("no OAuth authorization in flight has this state: it expired, was cancelled or was already completed");
        this.state = state;
    }

    public String state() {
        return state;
    }
}
