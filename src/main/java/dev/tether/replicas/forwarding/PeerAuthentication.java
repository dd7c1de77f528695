package dev.tether.replicas.forwarding;

import java.util.Objects;
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

import dev.tether.identity.Principals;
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
    private final PeerCredentials credentials;
    private final ErrorBodies errors;

    PeerAuthentication(ConnectionOwners owners, PeerCredentials credentials, ErrorBodies errors) {
        this.owners = owners;
        this.credentials = credentials;
        this.errors = errors;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        if (owners.shared() && PeerExchange.markedAsPeers(request)) {
            Optional<String> refusal = refusal(request);
            if (refusal.isPresent()) {
                exchange.getResponse().getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, "TetherPeer");
                return errors.refuse(exchange.getResponse(), HttpStatus.UNAUTHORIZED, "UnauthorizedError",
                        "this request says a peer replica sent it, and does not prove it: " + refusal.get());
            }
            new AuthenticatedPeer(String.valueOf(request.getHeaders().getFirst(PeerExchange.FORWARDED))).mark(exchange);
        }
        return chain.filter(exchange);
    }

    /**
     * Why {@code request}, marked as a peer's, is not proven to be one; empty when it is. A request marked by neither
     * header is no peer's and not asked about.
     */
    private Optional<String> refusal(ServerHttpRequest request) {
        HttpHeaders headers = request.getHeaders();
        String sender = headers.getFirst(PeerExchange.FORWARDED);
        String credential = headers.getFirst(PeerExchange.CREDENTIAL);
        if (sender == null || credential == null) {
            return Optional.of("a request from a peer carries both " + PeerExchange.FORWARDED + " and " + PeerExchange.CREDENTIAL);
        }
        return credentials.refusal(credential, PeerExchange.signed(request.getMethod(), request.getURI(), sender,
                Objects.requireNonNullElse(headers.getFirst(PeerExchange.STORE_POSITION), ""), headers.getFirst(Principals.HEADER)));
    }
}
