package dev.tether.api;

import dev.tether.replicas.ConnectionOwners.Peer;

/** A connection's owner answered an execution's forwarded tool call with an error status instead of a result. */
final class PeerCallException extends RuntimeException {

    private static final int QUOTED = 512;

    PeerCallException(Peer peer, String address, int status, String body) {
        super("replica " + peer.instance() + " at " + peer.address() + ", which owns the connection of " + address
                + ", answered " + status + ": " + (body.length() > QUOTED ? body.substring(0, QUOTED) + "…" : body));
    }
}
