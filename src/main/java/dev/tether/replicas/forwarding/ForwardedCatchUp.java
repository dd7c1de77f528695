package dev.tether.replicas.forwarding;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.http.server.reactive.ServerHttpRequest;
import reactor.core.publisher.Mono;

import dev.tether.store.changes.StorePosition;

/**
 * A request a peer passed here is served once this replica has read the store as far as that peer had when it passed
 * it on ({@value PeerExchange#STORE_POSITION}): read-your-writes across replicas, for the client who registered a
 * connection through one replica and checks it at once through the same one, whose owner is another. Runs after the
 * token is checked and before the forwarding filters, which serve a forwarded request where it lands.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 9)
final class ForwardedCatchUp implements WebFilter {

    private final StorePosition store;

    ForwardedCatchUp(StorePosition store) {
        this.store = store;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!PeerExchange.forwarded(exchange)) {
            return chain.filter(exchange);
        }
        return caughtUpWith(exchange.getRequest()).then(Mono.defer(() -> chain.filter(exchange)));
    }

    /**
     * Completes once this replica has read the store as far as the peer that forwarded {@code request} had, so that
     * what the peer wrote just before (a connection, a policy) is known here; at once for a request without a position.
     */
    private Mono<Void> caughtUpWith(ServerHttpRequest request) {
        String position = request.getHeaders().getFirst(PeerExchange.STORE_POSITION);
        try {
            return position == null ? Mono.empty() : store.awaitApplied(Long.parseLong(position));
        }
        catch (NumberFormatException notANumber) {
            return Mono.empty();
        }
    }
}
