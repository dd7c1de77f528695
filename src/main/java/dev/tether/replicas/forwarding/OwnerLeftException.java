package dev.tether.replicas.forwarding;

import dev.tether.replicas.ConnectionOwners.Peer;

/**
 * A connection's owner provably did not take a forwarded request: it refused the connection (it is stopping or has
 * just stopped) or answered that it is draining. Only then may the request go to the new owner: a request the owner
 * may have begun (a connection lost after sending) is never sent twice.
 */
final class OwnerLeftException extends RuntimeException {

    private final Peer peer;
    private final String how;

    OwnerLeftException(Peer peer, String how) {
        super("replica " + peer.instance() + " at " + peer.address() + " " + how, null, false, false);
        this.peer = peer;
        this.how = how;
    }

    /** The owner that did not take the request. */
    Peer peer() {
        return peer;
    }

    /** What the owner did: "refused the connection (…)", "is draining". */
    String how() {
        return how;
    }
}
