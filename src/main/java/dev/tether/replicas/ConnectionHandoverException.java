package dev.tether.replicas;

import java.time.Duration;
import java.util.List;

import dev.tether.store.ConnectionKey;

/** A connection's child could not start here: a live peer's container of it did not go within {@code handover-wait}. */
public final class ConnectionHandoverException extends RuntimeException {

    ConnectionHandoverException(ConnectionKey connection, List<?> holders, Duration waited) {
        super("connection " + connection + " still runs on another replica (" + holders + ") after " + waited
                + " (tether.replicas.handover-wait): that replica has not handed it over yet; try again");
    }
}
