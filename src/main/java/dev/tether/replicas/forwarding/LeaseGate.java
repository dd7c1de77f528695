package dev.tether.replicas.forwarding;

import java.util.Objects;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

import dev.tether.replicas.LeaseLostException;
import dev.tether.replicas.ReplicaLease;

/**
 * Nothing is served by a replica whose lease ran out until a renewal has said whether it still holds it
 * ({@link ReplicaLease#serving}): a replica thawed after a freeze, or starved longer than its lease, may have been taken
 * for dead, its connections started elsewhere, and it must tear its own children down before it answers anything for
 * them (a request queued in its socket while it was frozen included). A lease merely late costs a request one renewal.
 * Actuator's probes pass: readiness says what the lease is. Runs right after the token check.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 8)
final class LeaseGate implements WebFilter {

    private final ReplicaLease lease;
    private final ErrorBodies errors;

    LeaseGate(ReplicaLease lease, ErrorBodies errors) {
        this.lease = lease;
        this.errors = errors;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!lease.lapsed() || exchange.getRequest().getPath().pathWithinApplication().value().startsWith("/actuator")) {
            return chain.filter(exchange);
        }
        return lease.serving()
                .then(Mono.defer(() -> chain.filter(exchange)))
                .onErrorResume(LeaseLostException.class, lost -> errors.refuse(exchange.getResponse(), HttpStatus.SERVICE_UNAVAILABLE,
                        "ReplicaUnavailableError", Objects.requireNonNull(lost.getMessage())));
    }
}
