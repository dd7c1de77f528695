package dev.tether.replicas;

import java.util.Collection;

import dev.tether.store.ConnectionKey;

/**
 * For tests outside this package that must know in advance which replica a connection lands on (a test that freezes
 * or kills "the owner"): the same rendezvous rule {@link ConnectionOwners#remoteOwner} applies, not a copy of it.
 */
public final class RendezvousOwners {

    private RendezvousOwners() {
    }

    /** The replica among {@code instances} (all live, none draining) that owns {@code connection}. */
    public static String of(ConnectionKey connection, Collection<String> instances) {
        return ConnectionOwners.owner(connection.toString(), instances);
    }
}
