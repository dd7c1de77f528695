package dev.tether.security;

import java.util.Optional;

import org.springframework.web.server.ServerWebExchange;

/**
 * A request proven to come from a peer replica (the cluster's own filter checks its signed credential before any guard
 * runs). The browser guards ({@link HostOriginFilter}) pass it, and the authentication (the users package) takes its
 * principal from the peer, which checked its client's credential: the guards are for browsers and clients, and a peer
 * forwards with the name in its lease, which is no browser's, and with no client's credential. Nothing but that filter
 * marks an exchange.
 *
 * @param instance the sending replica's instance id
 */
public record AuthenticatedPeer(String instance) {

    private static final String ATTRIBUTE = AuthenticatedPeer.class.getName();

    /** Marks {@code exchange} as sent by this peer. */
    public void mark(ServerWebExchange exchange) {
        exchange.getAttributes().put(ATTRIBUTE, this);
    }

    /** The peer that sent {@code exchange}, when one proved it did. */
    public static Optional<AuthenticatedPeer> of(ServerWebExchange exchange) {
        return Optional.ofNullable(exchange.getAttribute(ATTRIBUTE));
    }
}
