package dev.tether.health;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.mcp.McpSession;
import dev.tether.session.ConnectionSessions;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionNotFoundException;
import dev.tether.store.ConnectionStore;
import dev.tether.store.HealthVerdict;
import dev.tether.store.IntegrationNotFoundException;

/**
 * Connection health checks. For MCP the check is liveness: the server starts, completes the handshake and
 * answers a ping. Every verdict is persisted as the connection's {@code lastHealth}; a cancelled check
 * persists nothing and leaves nothing running.
 */
@Component
public final class HealthService {

    private final ConnectionSessions sessions;
    private final ConnectionStore connections;
    private final Clock clock;
    private final MeterRegistry registry;

    public HealthService(ConnectionSessions sessions, ConnectionStore connections, Clock clock, MeterRegistry registry) {
        this.sessions = sessions;
        this.connections = connections;
        this.clock = clock;
        this.registry = registry;
    }

    /**
     * Checks a connection; with {@code ifStale}, a persisted verdict younger than that is returned without
     * probing.
     */
    public Mono<HealthVerdict> check(ConnectionKey key, Optional<Duration> ifStale) {
        return connections.find(key)
                .switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key)))
                .flatMap(connection -> fresh(connection, ifStale)
                        .map(verdict -> Mono.just(verdict).doOnNext(v -> count("cached")))
                        .orElseGet(() -> probe(key)));
    }

    private Optional<HealthVerdict> fresh(Connection connection, Optional<Duration> ifStale) {
        return ifStale.flatMap(maxAge -> connection.lastHealth()
                .filter(verdict -> clock.millis() - verdict.checkedAt() < maxAge.toMillis()));
    }

    private Mono<HealthVerdict> probe(ConnectionKey key) {
        return sessions.withSession(key, McpSession::ping)
                .then(Mono.fromSupplier(() -> HealthVerdict.healthy(clock.millis())))
                .onErrorResume(error -> !isLookupFailure(error),
                        error -> Mono.fromSupplier(() -> HealthVerdict.degraded(clock.millis(), error.getMessage())))
                .flatMap(verdict -> connections.saveHealth(key, verdict).thenReturn(verdict))
                .doOnNext(verdict -> count(verdict.status()))
                .doOnCancel(() -> count("cancelled"));
    }

    private static boolean isLookupFailure(Throwable error) {
        return error instanceof ConnectionNotFoundException || error instanceof IntegrationNotFoundException;
    }

    private void count(String outcome) {
        Counter.builder("tether.health.checks").tag("outcome", outcome)
                .description("connection health checks by outcome").register(registry).increment();
    }
}
