package dev.tether.store.storage;

import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.context.annotation.Primary;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.tether.identity.NotPermittedException;
import dev.tether.store.CatalogStore;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionNotFoundException;
import dev.tether.store.ConnectionStore;
import dev.tether.store.CredentialStore;
import dev.tether.store.HealthVerdict;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationStore;
import dev.tether.store.Owner;
import dev.tether.store.OwnerNames;
import dev.tether.store.StoredCatalog;
import dev.tether.store.StoredTool;
import dev.tether.store.changes.StoreChanges;

/**
 * The store as every other part of Tether sees it: integrations, connections, parsed catalogs and policies held
 * in memory, so that a warm request never waits for the database. The database stays the truth:
 *
 * <ul>
 * <li>Everything is loaded on first use (the lifecycle starts that before the server takes requests).
 * <li>Every write goes through here: to the database first, then into memory, then into the change log
 *     ({@code store_change}), from which replicas sharing a PostgreSQL reload exactly the rows another replica
 *     changed, as each change is announced ({@link StoreUpkeep}). A verdict so learnt is passed on to this
 *     replica's health listeners ({@link #verdictsOfPeers()}).
 * <li>Health verdicts are the exception: they are in memory at once and reach the database behind, at most
 *     {@code tether.store.write-behind} later and only the newest per connection. A graceful stop flushes what is
 *     pending; a {@code kill -9} loses at most the verdicts of that last interval.
 * </ul>
 * Policies are cached by {@link CachedPolicies}, which hears here of other replicas' changes to them; the timers
 * that write verdicts behind and read the change log run in {@link StoreUpkeep}. Credentials are not held here:
 * they are needed only to start a server, and stay in the database until then.
 */
@Primary
@Component
final class MemoryStore implements IntegrationStore, ConnectionStore, CredentialStore, CatalogStore {

    /** Identity values are handed out before commit, so a change may become visible after a later one was read. */
    private static final long LOOKBACK = 64;

    /** A catalog with its tools indexed by the name in their address. */
    private record Indexed(StoredCatalog catalog, Map<String, StoredTool> byName) {

        static Indexed of(StoredCatalog catalog) {
            Map<String, StoredTool> byName = new HashMap<>();
            catalog.tools().forEach(tool -> byName.putIfAbsent(tool.name(), tool));
            return new Indexed(catalog, byName);
        }
    }

    private final R2dbcStore store;
    private final OwnerScope scope;
    private final CachedPolicies policies;
    private final StoreChanges changes;
    private final Map<String, Integration> integrations = new ConcurrentHashMap<>();
    private final Map<ConnectionKey, Connection> connections = new ConcurrentHashMap<>();
    private final Map<ConnectionKey, Optional<Indexed>> catalogs = new ConcurrentHashMap<>();
    private final Map<ConnectionKey, HealthVerdict> pendingVerdicts = new ConcurrentHashMap<>();
    private final Sinks.Many<Connection> verdictsOfPeers = Sinks.many().multicast().directBestEffort();
    private final Mono<Boolean> loaded;

    MemoryStore(R2dbcStore store, OwnerScope scope, CachedPolicies policies, StoreChanges changes) {
        this.store = store;
        this.scope = scope;
        this.policies = policies;
        this.changes = changes;
        // A failed load is not remembered: the next asker tries again.
        this.loaded = Mono.defer(this::load).cache(ok -> Duration.ofMillis(Long.MAX_VALUE), error -> Duration.ZERO,
                () -> Duration.ZERO);
    }

    /** Loaded once; a failed load is tried again by the next asker. */
    Mono<Boolean> loaded() {
        return loaded;
    }

    private Mono<Boolean> load() {
        // The change log's position first: whatever changes while loading is applied again afterwards.
        return changes.loadFrom(LOOKBACK).flatMap(position -> store.all()
                .doOnNext(integration -> integrations.put(integration.slug(), integration))
                .thenMany(store.all(Optional.empty(), Optional.empty()))
                .doOnNext(connection -> connections.put(connection.key(), connection))
                .then(Mono.fromRunnable(() -> changes.seen(position)))
                .thenReturn(true));
    }

    private <T> Mono<T> read(java.util.function.Supplier<T> value) {
        return loaded.then(Mono.fromSupplier(value));
    }

    /**
     * Read-your-writes behind a round-robin balancer: what this replica does not know may be what another wrote a
     * moment ago, before this one read the change log (a client registers a connection through one replica and
     * refreshes it through the next), so a miss of a shared store asks the database. What it finds is answered, not
     * kept: memory follows the change log alone, so a delete read meanwhile is never undone by a late miss.
     */
    private <T> Mono<T> orFromDatabase(Mono<T> inMemory, java.util.function.Supplier<Mono<T>> database) {
        return inMemory.switchIfEmpty(Mono.defer(() -> changes.shared() ? loaded.then(database.get()) : Mono.empty()));
    }

    // ---- integrations ----------------------------------------------------------------------

    @Override
    public Mono<Integration> create(Integration integration) {
        return scope.administer(new OwnerScope.Write("integration.create", "register a server", integration.slug()), loaded.then(store.create(integration))
                .doOnNext(created -> integrations.put(created.slug(), created))
                .flatMap(created -> changes.record("integration", created.slug()).thenReturn(created)));
    }

    @Override
    public Mono<Integration> update(Integration integration) {
        return scope.administer(new OwnerScope.Write("integration.update", "change a server", integration.slug()), loaded.then(store.update(integration))
                .doOnNext(updated -> integrations.put(updated.slug(), updated))
                .flatMap(updated -> changes.record("integration", updated.slug()).thenReturn(updated)));
    }

    @Override
    public Mono<Integration> find(String slug) {
        return orFromDatabase(read(() -> integrations.get(slug)), () -> store.find(slug));
    }

    @Override
    public Flux<Integration> all() {
        return read(() -> integrations.values().stream().sorted(Comparator.comparing(Integration::slug)).toList())
                .flatMapIterable(list -> list);
    }

    @Override
    public Mono<Boolean> delete(String slug) {
        return scope.administer(new OwnerScope.Write("integration.delete", "remove a server", slug), loaded.then(store.delete(slug))
                .doOnNext(existed -> forgetIntegration(slug))
                .flatMap(existed -> changes.record("integration", slug).thenReturn(existed)));
    }

    private void forgetIntegration(String slug) {
        integrations.remove(slug);
        connections.keySet().removeIf(key -> key.integration().equals(slug));
        catalogs.keySet().removeIf(key -> key.integration().equals(slug));
        pendingVerdicts.keySet().removeIf(key -> key.integration().equals(slug));
    }

    // ---- connections -----------------------------------------------------------------------

    @Override
    public Mono<Connection> create(Connection connection, Map<String, String> credentials) {
        ConnectionKey key = connection.key();
        return scope.write(key.owner(), key.subject(), new OwnerScope.Write("connection.create", "create a connection", key.toString()),
                caller -> Mono.error(new NotPermittedException(caller, "create another user's connection")),
                caller -> loaded.then(store.create(connection, credentials))
                        .doOnNext(created -> connections.put(created.key(), created))
                        .flatMap(created -> changes.record("connection", itemOf(created.key())).thenReturn(created)));
    }

    @Override
    public Mono<Connection> update(Connection connection, Optional<Map<String, String>> credentials) {
        ConnectionKey key = connection.key();
        return scope.write(key.owner(), key.subject(), new OwnerScope.Write("connection.update", "change a connection", key.toString()), caller -> Mono.empty(),
                caller -> loaded.then(store.update(connection, credentials))
                        // The database's row, with the verdict this daemon reached but has not written yet.
                        .map(updated -> Optional.ofNullable(pendingVerdicts.get(updated.key())).map(updated::withHealth).orElse(updated))
                        .doOnNext(updated -> connections.put(updated.key(), updated))
                        .flatMap(updated -> changes.record("connection", itemOf(updated.key())).thenReturn(updated)));
    }

    @Override
    public Mono<Connection> find(ConnectionKey key) {
        return OwnerScope.caller().flatMap(caller -> OwnerScope.sees(caller, key)
                ? orFromDatabase(read(() -> connections.get(key)), () -> store.find(key)) : Mono.empty());
    }

    @Override
    public Flux<Connection> all(Optional<String> integration, Optional<Owner> owner) {
        return OwnerScope.visible(allSeen(integration, owner), connection -> connection.key().subject());
    }

    private Flux<Connection> allSeen(Optional<String> integration, Optional<Owner> owner) {
        return read(() -> connections.values().stream()
                .filter(c -> integration.map(c.key().integration()::equals).orElse(true))
                .filter(c -> owner.map(c.key().owner()::equals).orElse(true))
                .sorted(Comparator.comparing((Connection c) -> c.key().integration())
                        .thenComparing(c -> c.key().owner().wire())
                        .thenComparing(c -> c.key().subject())
                        .thenComparing(c -> c.key().name()))
                .toList())
                .flatMapIterable(list -> list);
    }

    @Override
    public Mono<Boolean> delete(ConnectionKey key) {
        return scope.write(key.owner(), key.subject(), new OwnerScope.Write("connection.delete", "remove a connection", key.toString()), caller -> Mono.just(false),
                caller -> loaded.then(store.delete(key))
                        .doOnNext(existed -> {
                            connections.remove(key);
                            catalogs.remove(key);
                            pendingVerdicts.remove(key);
                        })
                        .flatMap(existed -> changes.record("connection", itemOf(key)).thenReturn(existed)));
    }

    /**
     * In memory at once; in the database within {@code tether.store.write-behind}. A verdict is what the daemon saw,
     * not a change a caller makes: anyone who sees the connection may bring one about.
     */
    @Override
    public Mono<Boolean> saveHealth(ConnectionKey key, HealthVerdict verdict) {
        return OwnerScope.caller().flatMap(caller -> !OwnerScope.sees(caller, key) ? Mono.just(false) : read(() -> {
            Connection updated = connections.computeIfPresent(key, (k, connection) -> connection.withHealth(verdict));
            if (updated == null) {
                return false;
            }
            pendingVerdicts.put(key, verdict);
            return true;
        }));
    }

    /** How many verdicts wait to be written. */
    int pendingVerdicts() {
        return pendingVerdicts.size();
    }

    /** Writes every pending verdict, the newest of each connection; a verdict reached meanwhile waits for the next. */
    Mono<Void> flush() {
        return Flux.fromIterable(List.copyOf(pendingVerdicts.keySet()))
                .concatMap(key -> Mono.justOrEmpty(pendingVerdicts.get(key))
                        .flatMap(verdict -> store.saveHealth(key, verdict)
                                .doOnNext(saved -> pendingVerdicts.remove(key, verdict))
                                .flatMap(saved -> saved ? changes.record("connection", itemOf(key)) : Mono.empty())))
                .then();
    }

    // ---- credentials -----------------------------------------------------------------------

    /** Only to start the connection's server: never part of an answer. */
    @Override
    public Mono<Map<String, String>> credentials(ConnectionKey key) {
        return OwnerScope.caller().flatMap(caller -> OwnerScope.sees(caller, key) ? store.credentials(key)
                : Mono.error(new ConnectionNotFoundException(key)));
    }

    @Override
    public Flux<CredentialName> names() {
        return OwnerScope.visible(store.names(), name -> name.connection().subject());
    }

    // ---- catalogs --------------------------------------------------------------------------

    @Override
    public Mono<StoredCatalog> catalog(ConnectionKey key) {
        return indexed(key).map(Indexed::catalog);
    }

    @Override
    public Mono<StoredTool> tool(ConnectionKey key, String name) {
        return indexed(key).flatMap(indexed -> Mono.justOrEmpty(indexed.byName().get(name)));
    }

    /** Catalogs are read from the database once each, on first use: most are never asked for before they are synced. */
    private Mono<Indexed> indexed(ConnectionKey key) {
        return OwnerScope.seen(key, loaded.then(Mono.defer(() -> {
            Optional<Indexed> known = catalogs.get(key);
            if (known != null) {
                return Mono.justOrEmpty(known);
            }
            if (!connections.containsKey(key)) {
                return Mono.empty();
            }
            return store.catalog(key).map(Indexed::of).map(Optional::of).defaultIfEmpty(Optional.empty())
                    // A sync that saved meanwhile wins over what was read before it.
                    .map(read -> catalogs.computeIfAbsent(key, k -> read))
                    .flatMap(Mono::justOrEmpty);
        })));
    }

    /** As {@link #saveHealth}, what the daemon saw: anyone who sees the connection may bring it about. */
    @Override
    public Mono<Void> saveCatalog(ConnectionKey key, StoredCatalog catalog) {
        return OwnerScope.seen(key, loaded.then(store.saveCatalog(key, catalog))
                .then(Mono.fromRunnable(() -> {
                    if (connections.containsKey(key)) {
                        catalogs.put(key, Optional.of(Indexed.of(catalog)));
                    }
                }))
                .then(changes.record("catalog", itemOf(key))));
    }

    @Override
    public Mono<StoredCatalog> reload(ConnectionKey key) {
        return OwnerScope.seen(key, loaded.then(store.catalog(key))
                .doOnNext(catalog -> {
                    if (connections.containsKey(key)) {
                        catalogs.put(key, Optional.of(Indexed.of(catalog)));
                    }
                }));
    }

    // ---- other replicas --------------------------------------------------------------------

    /** A connection as its change is announced: {@code <owner>/<integration>/<name>}, the owner word with its subject. */
    static String itemOf(ConnectionKey key) {
        return key.toString();
    }

    private static ConnectionKey connectionOf(String item) {
        String[] parts = item.split("/", 3);
        OwnerNames.Owned owned = OwnerNames.parse(parts[0]).orElseThrow(() -> new IllegalArgumentException("not a connection: " + item));
        return new ConnectionKey(owned.owner(), parts[1], parts[2], owned.subject());
    }

    /** Reloads what other replicas changed since the last look. */
    Mono<Void> catchUp() {
        return loaded.thenMany(changes.since(LOOKBACK))
                .concatMap(change -> switch (change.kind()) {
                    case "integration" -> store.find(change.item()).map(Optional::of).defaultIfEmpty(Optional.empty())
                            .doOnNext(found -> found.ifPresentOrElse(i -> integrations.put(i.slug(), i),
                                    () -> forgetIntegration(change.item())));
                    case "connection" -> reloadConnection(connectionOf(change.item()));
                    case "catalog" -> Mono.fromRunnable(() -> catalogs.remove(connectionOf(change.item())));
                    case "policy" -> Mono.fromRunnable(policies::forget);
                    default -> Mono.empty();
                })
                .then();
    }

    @Override
    public Flux<Connection> verdictsOfPeers() {
        return verdictsOfPeers.asFlux();
    }

    private Mono<?> reloadConnection(ConnectionKey key) {
        return store.find(key).map(Optional::of).defaultIfEmpty(Optional.empty())
                .doOnNext(found -> found.ifPresentOrElse(c -> {
                            Connection known = connections.put(key,
                                    Optional.ofNullable(pendingVerdicts.get(key)).map(c::withHealth).orElse(c));
                            if (c.lastHealth().isPresent() && !pendingVerdicts.containsKey(key)
                                    && (known == null || !known.lastHealth().equals(c.lastHealth()))) {
                                verdictsOfPeers.tryEmitNext(c);
                            }
                        },
                        () -> {
                            connections.remove(key);
                            catalogs.remove(key);
                            pendingVerdicts.remove(key);
                        }));
    }
}
