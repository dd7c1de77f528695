package dev.tether.replicas.forwarding;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * A request a peer passed here is served once this replica has read the store as far as that peer had when it passed
 * it on ({@link PeerExchange#caughtUpWith}): read-your-writes across replicas, for the client who registered a
 * connection through one replica and checks it at once through the same one, whose owner is another. Runs after the
 * token is checked and before the forwarding filters, which serve a forwarded request where it lands.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 9)
final class ForwardedCatchUp implements WebFilter {

    private final PeerExchange peers;

    ForwardedCatchUp(PeerExchange peers) {
        this.peers = peers;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!PeerExchange.forwarded(exchange)) {
            return chain.filter(exchange);
        }
        return peers.caughtUpWith(exchange.getRequest()).then(Mono.defer(() -> chain.filter(exchange)));
    }
}
