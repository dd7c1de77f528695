package dev.tether.replicas.forwarding;

import java.util.Optional;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.PeerCredentials;
import dev.tether.security.AuthenticatedPeer;
import dev.tether.security.HostOriginFilter;

/**
 * Tells a peer replica's request from a browser's or a client's, before any guard runs. A request that says it comes
 * from a peer ({@value PeerExchange#FORWARDED}, {@value PeerExchange#CREDENTIAL}) must prove it with a credential
 * signed for it alone ({@link PeerCredentials}), or it is refused with 401 and goes no further; one that proves it is
 * an {@link AuthenticatedPeer}, which the browser guards and the token check let pass: a peer forwards with the name
 * in its lease as {@code Host} (by default the host name, which often resolves to loopback, where
 * {@link HostOriginFilter} would take it for a rebound page's) and with no client's credential. On an embedded store
 * there are no peers, and a request that says it comes from one is treated as any other, which makes it no peer's.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
final class PeerAuthentication implements WebFilter {

    private final ConnectionOwners owners;
    private final PeerExchange peers;

    PeerAuthentication(ConnectionOwners owners, PeerExchange peers) {
        this.owners = owners;
        this.peers = peers;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        if (owners.shared() && PeerExchange.markedAsPeers(request)) {
            Optional<String> refusal = peers.refusal(request);
            if (refusal.isPresent()) {
                exchange.getResponse().getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, "TetherPeer");
                return peers.refuse(exchange.getResponse(), HttpStatus.UNAUTHORIZED, "UnauthorizedError",
                        "this request says a peer replica sent it, and does not prove it: " + refusal.get());
            }
            new AuthenticatedPeer(String.valueOf(request.getHeaders().getFirst(PeerExchange.FORWARDED))).mark(exchange);
        }
        return chain.filter(exchange);
    }
}
