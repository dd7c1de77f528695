package dev.tether.catalog;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.mcp.McpSession;
import dev.tether.mcp.ToolCatalog;
import dev.tether.session.ConnectionSessions;
import dev.tether.store.CatalogStore;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionNotFoundException;
import dev.tether.store.ConnectionStore;
import dev.tether.store.HealthVerdict;
import dev.tether.store.IntegrationStore;
import dev.tether.store.Owner;
import dev.tether.store.StoredCatalog;
import dev.tether.store.StoredTool;

/**
 * Tool catalogs of connections. A sync that fails or comes back incomplete keeps the stored catalog and
 * marks the connection degraded with the reason, as Executor's "preserved catalog".
 */
@Component
public final class CatalogService {

    private static final Logger log = LoggerFactory.getLogger(CatalogService.class);

    /** A connection's tools, as stored. */
    public record ConnectionTools(ConnectionKey key, List<StoredTool> tools) {
    }

    private final ConnectionSessions sessions;
    private final IntegrationStore integrations;
    private final ConnectionStore connections;
    private final CatalogStore catalogs;
    private final CatalogProperties properties;
    private final Clock clock;
    private final MeterRegistry registry;

    public CatalogService(ConnectionSessions sessions, IntegrationStore integrations, ConnectionStore connections,
            CatalogStore catalogs, CatalogProperties properties, Clock clock, MeterRegistry registry) {
        this.sessions = sessions;
        this.integrations = integrations;
        this.connections = connections;
        this.catalogs = catalogs;
        this.properties = properties;
        this.clock = clock;
        this.registry = registry;
    }

    /** Re-lists a connection's tools now and returns its catalog: the new one, or the preserved one. */
    public Mono<ConnectionTools> refresh(ConnectionKey key) {
        return connections.find(key)
                .switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key)))
                .flatMap(connection -> sync(key));
    }

    /** Tools of the matching connections; stale catalogs are synced first, a few at a time. */
    public Flux<ConnectionTools> tools(Optional<String> integration, Optional<Owner> owner, Optional<String> connection) {
        return connections.all(integration, owner)
                .filter(c -> connection.map(c.key().name()::equals).orElse(true))
                .flatMap(this::currentTools, properties.syncConcurrency());
    }

    private Mono<ConnectionTools> currentTools(Connection connection) {
        ConnectionKey key = connection.key();
        return catalogs.catalog(key)
                .map(Optional::of)
                .defaultIfEmpty(Optional.empty())
                .zipWith(integrations.find(key.integration()).map(i -> i.configChangedAt()).defaultIfEmpty(Instant.EPOCH))
                .flatMap(stored -> isStale(stored.getT1(), stored.getT2()) ? sync(key)
                        : Mono.just(new ConnectionTools(key, stored.getT1().orElseThrow().tools())));
    }

    private boolean isStale(Optional<StoredCatalog> catalog, Instant configChangedAt) {
        return catalog.map(c -> c.syncedAt().isBefore(configChangedAt)
                || c.syncedAt().plus(properties.ttl()).isBefore(clock.instant())).orElse(true);
    }

    private Mono<ConnectionTools> sync(ConnectionKey key) {
        Timer.Sample timing = Timer.start(registry);
        return sessions.withSession(key, McpSession::listTools)
                .flatMap(listed -> listed.complete() ? save(key, listed) : preserve(key, listed.incompleteReason().orElseThrow()))
                .onErrorResume(error -> !(error instanceof ConnectionNotFoundException), error -> preserve(key, error.getMessage()))
                .doOnNext(tools -> timing.stop(timer("ok")))
                .doOnCancel(() -> timing.stop(timer("cancelled")));
    }

    private Mono<ConnectionTools> save(ConnectionKey key, ToolCatalog listed) {
        StoredCatalog catalog = new StoredCatalog(ToolNaming.name(listed.tools()), clock.instant());
        return catalogs.saveCatalog(key, catalog).thenReturn(new ConnectionTools(key, catalog.tools()));
    }

    private Mono<ConnectionTools> preserve(ConnectionKey key, String reason) {
        log.warn("tool sync of {} preserved the stored catalog: {}", key, reason);
        return connections.saveHealth(key, HealthVerdict.degraded(clock.millis(), "tool sync failed, catalog preserved: " + reason))
                .then(catalogs.catalog(key))
                .map(StoredCatalog::tools)
                .defaultIfEmpty(List.of())
                .map(tools -> new ConnectionTools(key, tools));
    }

    private Timer timer(String outcome) {
        return Timer.builder("tether.catalog.sync").tag("outcome", outcome)
                .description("tool catalog syncs").register(registry);
    }
}
