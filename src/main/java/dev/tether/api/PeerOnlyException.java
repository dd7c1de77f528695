package dev.tether.api;

/**
 * A route only peer replicas call ({@code /api/replicas/**}), asked by a client: the client has the token, but what
 * these routes do (a tool call an execution or an agent of another replica makes, already allowed by that replica's
 * policies) is for a peer that proved itself ({@code replicas.forwarding.PeerAuthentication}).
 */
final class PeerOnlyException extends RuntimeException {

    PeerOnlyException(String route) {
        super("only a peer replica on the same store may call " + route + ": a client calls the route the peer would have"
                + " served, such as POST /api/tools/call", null, false, false);
    }
}
