package dev.tether.replicas;

import java.util.Collection;

import dev.tether.store.ConnectionKey;

/**
 * Which of {@code instances} owns a connection, as every replica that sees those leases computes it: for tests that
 * drive packaged replicas and must know, before any request, whose a connection is and whose it becomes.
 */
public final class RendezvousOwners {

    private RendezvousOwners() {
    }

    public static String of(ConnectionKey connection, Collection<String> instances) {
        return ConnectionOwners.owner(connection.toString(), instances);
    }
}
