package dev.tether.users;

/** No API token with this id that the caller may see: unknown, or another user's. */
public final class TokenNotFoundException extends RuntimeException {

    private final String id;

    TokenNotFoundException(String id) {
        super("no API token " + id + " of yours");
        this.id = id;
    }

    public String id() {
        return id;
    }
}
