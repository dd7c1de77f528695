package dev.tether.store;

/** No connection has this key. */
public final class ConnectionNotFoundException extends RuntimeException {

    private final ConnectionKey key;

    public ConnectionNotFoundException(ConnectionKey key) {
        super("connection " + key + " not found");
        this.key = key;
    }

    public ConnectionKey key() {
        return key;
    }
}
