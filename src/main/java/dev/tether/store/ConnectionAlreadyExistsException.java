package dev.tether.store;

/** A connection with this key exists already. */
public final class ConnectionAlreadyExistsException extends RuntimeException {

    public ConnectionAlreadyExistsException(ConnectionKey key) {
        super("connection " + key + " already exists");
    }
}
