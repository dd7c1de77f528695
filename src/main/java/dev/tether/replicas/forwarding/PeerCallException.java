package dev.tether.replicas.forwarding;

import dev.tether.replicas.ConnectionOwners.Peer;

/** A peer answered a request this replica sent it (an execution's tool call, a catalog sync, a batch's check) with an error status. */
final class PeerCallException extends RuntimeException {

    private static final int QUOTED = 512;

    PeerCallException(Peer peer, String what, int status, String body) {
        super("replica " + peer.instance() + " at " + peer.address() + ", which owns " + what
                + ", answered " + status + ": " + (body.length() > QUOTED ? body.substring(0, QUOTED) + "…" : body));
    }
}
