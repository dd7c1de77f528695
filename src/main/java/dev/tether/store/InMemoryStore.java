package dev.tether.store;

import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The store kept in memory: every state change is one atomic map operation, so concurrent creates of one
 * slug or key have exactly one winner. A durable store replaces it behind the same interfaces.
 */
@Component
final class InMemoryStore implements IntegrationStore, ConnectionStore, CredentialStore, CatalogStore {

    private final ConcurrentMap<String, Integration> integrations = new ConcurrentHashMap<>();
    private final ConcurrentMap<ConnectionKey, Connection> connections = new ConcurrentHashMap<>();
    private final ConcurrentMap<ConnectionKey, Map<String, String>> credentials = new ConcurrentHashMap<>();
    private final ConcurrentMap<ConnectionKey, StoredCatalog> catalogs = new ConcurrentHashMap<>();

    @Override
    public Mono<Integration> create(Integration integration) {
        return Mono.fromCallable(() -> {
            if (integrations.putIfAbsent(integration.slug(), integration) != null) {
                throw new IntegrationAlreadyExistsException(integration.slug());
            }
            return integration;
        });
    }

    @Override
    public Mono<Integration> update(Integration integration) {
        return Mono.fromCallable(() -> integrations.computeIfPresent(integration.slug(), (slug, old) -> integration));
    }

    @Override
    public Mono<Integration> find(String slug) {
        return Mono.fromCallable(() -> integrations.get(slug));
    }

    @Override
    public Flux<Integration> all() {
        return Flux.defer(() -> Flux.fromStream(integrations.values().stream().sorted(Comparator.comparing(Integration::slug))));
    }

    @Override
    public Mono<Boolean> delete(String slug) {
        return Mono.fromCallable(() -> {
            boolean existed = integrations.remove(slug) != null;
            connections.keySet().removeIf(key -> key.integration().equals(slug));
            credentials.keySet().removeIf(key -> key.integration().equals(slug));
            catalogs.keySet().removeIf(key -> key.integration().equals(slug));
            return existed;
        });
    }

    @Override
    public Mono<Connection> create(Connection connection) {
        return Mono.fromCallable(() -> {
            if (connections.putIfAbsent(connection.key(), connection) != null) {
                throw new ConnectionAlreadyExistsException(connection.key());
            }
            return connection;
        });
    }

    @Override
    public Mono<Connection> find(ConnectionKey key) {
        return Mono.fromCallable(() -> connections.get(key));
    }

    @Override
    public Flux<Connection> all(Optional<String> integration, Optional<Owner> owner) {
        return Flux.defer(() -> Flux.fromStream(connections.values().stream()
                .filter(c -> integration.map(c.key().integration()::equals).orElse(true))
                .filter(c -> owner.map(c.key().owner()::equals).orElse(true))
                .sorted(Comparator.comparing(c -> c.key().toString()))));
    }

    @Override
    public Mono<Boolean> delete(ConnectionKey key) {
        return Mono.fromCallable(() -> {
            credentials.remove(key);
            catalogs.remove(key);
            return connections.remove(key) != null;
        });
    }

    @Override
    public Mono<Connection> saveHealth(ConnectionKey key, HealthVerdict verdict) {
        return Mono.fromCallable(() -> connections.computeIfPresent(key, (k, old) -> old.withHealth(verdict)));
    }

    @Override
    public Mono<Void> saveCredentials(ConnectionKey key, Map<String, String> values) {
        return Mono.fromRunnable(() -> credentials.put(key, Map.copyOf(values)));
    }

    @Override
    public Mono<Map<String, String>> credentials(ConnectionKey key) {
        return Mono.fromCallable(() -> credentials.getOrDefault(key, Map.of()));
    }

    @Override
    public Mono<StoredCatalog> catalog(ConnectionKey key) {
        return Mono.fromCallable(() -> catalogs.get(key));
    }

    @Override
    public Mono<Void> saveCatalog(ConnectionKey key, StoredCatalog catalog) {
        return Mono.fromRunnable(() -> catalogs.put(key, catalog));
    }
}
