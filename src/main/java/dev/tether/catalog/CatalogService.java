package dev.tether.catalog;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import dev.tether.metrics.OutcomeTimers;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.tether.mcp.McpSession;
import dev.tether.session.SessionPool;
import dev.tether.store.CatalogStore;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionNotFoundException;
import dev.tether.store.ConnectionStore;
import dev.tether.store.HealthVerdict;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.IntegrationStore;
import dev.tether.store.Owner;
import dev.tether.store.StoredCatalog;
import dev.tether.store.StoredTool;

/**
 * Tool catalogs of connections.
 *
 * <p>Syncs run in the background on the pooled sessions, one at a time per connection and at most
 * {@code tether.catalog.sync-concurrency} in all; callers only observe them, so a client that leaves does
 * not waste a sync that is nearly done. A sync that fails or comes back incomplete keeps the stored catalog
 * and marks the connection degraded with the reason, as Executor's "preserved catalog". A catalog is stale
 * when never synced, older than the TTL, older than its integration's config, or announced changed by
 * the server ({@code notifications/tools/list_changed}).
 */
@Component
public final class CatalogService implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(CatalogService.class);

    /** A connection's tools, as stored. */
    public record ConnectionTools(ConnectionKey key, List<StoredTool> tools) {
    }

    /** A sync to run, here or at the connection's owner ({@code atOwner}), and where its outcome goes. */
    private record SyncJob(ConnectionKey key, Optional<Mono<Void>> atOwner, Sinks.One<ConnectionTools> outcome) {

        Map<ConnectionKey, Mono<ConnectionTools>> runningIn(Map<ConnectionKey, Mono<ConnectionTools>> here,
                Map<ConnectionKey, Mono<ConnectionTools>> atOwners) {
            return atOwner.isPresent() ? atOwners : here;
        }
    }

    private final SessionPool sessions;
    private final IntegrationStore integrations;
    private final ConnectionStore connections;
    private final CatalogStore catalogs;
    private final CatalogProperties properties;
    private final Clock clock;
    private final OutcomeTimers timers;
    private final OwnerSyncs owners;
    private final Map<ConnectionKey, Mono<ConnectionTools>> syncing = new ConcurrentHashMap<>();
    /**
     * Syncs sent to a connection's owner, apart from those here: a sync a peer asked of this replica runs here and never
     * joins one this replica sent to that peer, or two replicas whose lease snapshots differ would wait on each other.
     */
    private final Map<ConnectionKey, Mono<ConnectionTools>> syncingAtOwner = new ConcurrentHashMap<>();
    private final Set<ConnectionKey> announcedChanged = ConcurrentHashMap.newKeySet();
    /**
     * How long a server of MCP 2026-07-28 said its list may be kept ({@code ttlMs}), by connection, from its last
     * listing here; it replaces {@code tether.catalog.ttl} for that connection, floored at {@link #SHORTEST_TTL}. Kept
     * in memory: after a restart, or on a replica that never listed it, the configured TTL holds until the next sync.
     */
    private final Map<ConnectionKey, Duration> serverTtls = new ConcurrentHashMap<>();
    /** A server's {@code ttlMs} of 0 (keep nothing) still lets a burst of reads share one sync. */
    static final Duration SHORTEST_TTL = Duration.ofSeconds(1);
    private final Sinks.Many<SyncJob> jobs = Sinks.many().unicast().onBackpressureBuffer();
    private final Sinks.Many<String> changes = Sinks.many().multicast().directBestEffort();
    private final Disposable.Composite running = Disposables.composite();

    public CatalogService(SessionPool sessions, IntegrationStore integrations, ConnectionStore connections,
            CatalogStore catalogs, CatalogProperties properties, Clock clock, MeterRegistry registry, OwnerSyncs owners) {
        this.sessions = sessions;
        this.integrations = integrations;
        this.connections = connections;
        this.catalogs = catalogs;
        this.properties = properties;
        this.clock = clock;
        this.timers = new OutcomeTimers("tether.catalog.sync", "tool catalog syncs", registry);
        this.owners = owners;
    }

    /**
     * Re-lists a connection's tools now on this replica (joining a sync already running) and returns the resulting
     * catalog: for a request the API has already passed to the connection's owner, or that a peer passed here.
     */
    public Mono<ConnectionTools> refresh(ConnectionKey key) {
        return refresh(key, true);
    }

    /**
     * As {@link #refresh}, on the replica that owns the connection when that is another: for callers inside this
     * replica (an execution's {@code refresh} built-in), whose requests no API route has passed to the owner.
     */
    public Mono<ConnectionTools> refreshAtOwner(ConnectionKey key) {
        return refresh(key, false);
    }

    private Mono<ConnectionTools> refresh(ConnectionKey key, boolean here) {
        return connections.find(key)
                .switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key)))
                .flatMap(connection -> sync(key, here));
    }

    /**
     * Emits the slug of an integration each time the tools it offers may have changed: a sync stored a catalog
     * unlike the one before, its server announced {@code notifications/tools/list_changed}, or the API reported
     * a change ({@link #changed}). Hot: a subscriber hears the changes from when it subscribed.
     */
    public Flux<String> changes() {
        return changes.asFlux();
    }

    /**
     * Says that the tools of {@code integration} may have changed though no sync saw it: it or one of its
     * connections was added, re-configured or removed. A new or re-configured one is synced when next listed, and
     * an agent that hears of the change lists again.
     */
    public Mono<Void> changed(String integration) {
        return Mono.fromRunnable(() -> announce(integration));
    }

    /**
     * Tools of the matching connections, in the store's order of connections (so that unchanged catalogs give an
     * equal answer, which {@code GET /api/tools} relies on to reuse its encoded listing). Stale catalogs are synced
     * at once, by the connection's owner when that is another replica; a catalog whose sync takes longer than the
     * grace is answered from the store while the sync goes on.
     */
    public Flux<ConnectionTools> tools(Optional<String> integration, Optional<Owner> owner, Optional<String> connection) {
        return connections.all(integration, owner)
                .filter(c -> connection.map(c.key().name()::equals).orElse(true))
                .flatMapSequential(this::currentTools);
    }

    /**
     * The tools of a connection: synced now and awaited whole when its catalog is stale (never synced, older than its
     * config or the TTL; the sync has its own bounds), else the stored ones; empty when the connection is unknown. A
     * tool call that finds no tool in the stored catalog asks this before it says the tool does not exist: a server
     * registered a moment ago has no catalog yet, and one call's sync may have stored it between another call's look
     * and this question (a storm of calls on a new source: one in twelve was told its tool did not exist). Not the
     * grace of a listing, which has the stored catalog to fall back on: a call has nothing, and a sync slower than the
     * grace on a busy host made it say a tool of a just-added source did not exist.
     */
    public Mono<ConnectionTools> syncIfStale(ConnectionKey key) {
        return connections.find(key)
                .flatMap(connection -> isStale(key))
                .flatMap(stale -> stale ? sync(key, false)
                        : catalogs.catalog(key).map(catalog -> new ConnectionTools(key, catalog.tools())));
    }

    private Mono<ConnectionTools> currentTools(Connection connection) {
        ConnectionKey key = connection.key();
        Mono<ConnectionTools> stored = catalogs.catalog(key)
                .map(catalog -> new ConnectionTools(key, catalog.tools()))
                .defaultIfEmpty(new ConnectionTools(key, List.of()));
        return isStale(key).flatMap(stale -> stale ? sync(key, false).timeout(properties.grace(), stored) : stored);
    }

    private Mono<Boolean> isStale(ConnectionKey key) {
        if (announcedChanged.contains(key)) {
            return Mono.just(true);
        }
        Mono<Instant> configChangedAt = integrations.find(key.integration()).map(i -> i.configChangedAt()).defaultIfEmpty(Instant.EPOCH);
        return catalogs.catalog(key)
                .zipWith(configChangedAt, (catalog, changedAt) -> catalog.syncedAt().isBefore(changedAt)
                        || catalog.syncedAt().plus(serverTtls.getOrDefault(key, properties.ttl())).isBefore(clock.instant()))
                .defaultIfEmpty(true);
    }

    /**
     * The running sync of a connection, or a new one queued behind the concurrency bound: {@code here}, or at the
     * connection's owner when that is another replica.
     */
    private Mono<ConnectionTools> sync(ConnectionKey key, boolean here) {
        Sinks.One<ConnectionTools> outcome = Sinks.one();
        SyncJob job = new SyncJob(key, here ? Optional.empty()
                : owners.atOwner(key, Mono.defer(() -> syncedOnSession(key, timers.start())).then()), outcome);
        Mono<ConnectionTools> running = job.runningIn(syncing, syncingAtOwner).putIfAbsent(key, outcome.asMono());
        if (running != null) {
            return running;
        }
        // Queued only once registered, never inside a map update: a sync that ends at once (refused by the pool,
        // say) runs on this thread and must be able to remove its entry, or the connection never syncs again.
        // Askers on many threads queue jobs: the lock makes them take turns rather than spin on a refused emission.
        synchronized (jobs) {
            jobs.tryEmitNext(job);
        }
        return outcome.asMono();
    }

    private Mono<ConnectionTools> run(SyncJob job) {
        ConnectionKey key = job.key();
        announcedChanged.remove(key); // a change announced from now on needs another sync
        Timer.Sample timing = timers.start();
        Optional<Mono<Void>> atOwner = job.atOwner();
        Mono<ConnectionTools> synced = integrations.find(key.integration())
                .filter(integration -> integration.config() instanceof HttpSourceConfig)
                // An HTTP source's tools are its document's operations, made when it was added: nothing to list.
                .flatMap(integration -> save(key, ((HttpSourceConfig) integration.config()).tools()).doOnNext(tools -> timing.stop(timers.timer("ok"))))
                .switchIfEmpty(Mono.defer(() -> atOwner.map(owner -> syncedAtOwner(key, owner, timing))
                        .orElseGet(() -> syncedOnSession(key, timing))));
        return synced
                .doOnEach(signal -> {
                    if (signal.isOnNext()) {
                        job.runningIn(syncing, syncingAtOwner).remove(key);
                        job.outcome().tryEmitValue(signal.get());
                    }
                    else if (signal.isOnError()) {
                        job.runningIn(syncing, syncingAtOwner).remove(key);
                        job.outcome().tryEmitError(Objects.requireNonNull(signal.getThrowable()));
                    }
                })
                .onErrorResume(error -> Mono.empty());
    }

    /** Lists the tools on the connection's pooled session here; a failed or incomplete listing keeps the stored catalog. */
    private Mono<ConnectionTools> syncedOnSession(ConnectionKey key, Timer.Sample timing) {
        return sessions.withSession(key, McpSession::listTools)
                .doOnNext(listed -> listed.ttl().ifPresentOrElse(ttl -> serverTtls.put(key, ttl.compareTo(SHORTEST_TTL) < 0 ? SHORTEST_TTL : ttl),
                        () -> serverTtls.remove(key)))
                .flatMap(listed -> listed.complete() ? save(key, ToolNaming.name(listed.tools())).doOnNext(tools -> timing.stop(timers.timer("ok")))
                        : preserve(key, listed.incompleteReason().orElseThrow()).doOnNext(tools -> timing.stop(timers.timer("incomplete"))))
                .onErrorResume(error -> !(error instanceof ConnectionNotFoundException),
                        error -> preserve(key, error.getMessage()).doOnNext(tools -> timing.stop(timers.timer("failed"))));
    }

    /**
     * Another replica owns the connection's session: it syncs there and stores the catalog, which this replica reads
     * back, announcing a change as its own sync would. An owner that does not answer leaves the stored catalog and the
     * connection's verdict as they are: nothing was learnt of the server.
     */
    private Mono<ConnectionTools> syncedAtOwner(ConnectionKey key, Mono<Void> atOwner, Timer.Sample timing) {
        return catalogs.catalog(key).map(StoredCatalog::tools).defaultIfEmpty(List.of())
                .flatMap(before -> atOwner.then(catalogs.reload(key)).map(StoredCatalog::tools).defaultIfEmpty(before)
                        .doOnNext(after -> {
                            timing.stop(timers.timer("owner"));
                            if (!before.equals(after)) {
                                announce(key.integration());
                            }
                        })
                        .onErrorResume(error -> {
                            log.warn("tool sync of {} at its owner failed, the stored catalog stays: {}", key, error.getMessage());
                            timing.stop(timers.timer("failed"));
                            return Mono.just(before);
                        }))
                .map(tools -> new ConnectionTools(key, tools));
    }

    private Mono<ConnectionTools> save(ConnectionKey key, List<StoredTool> tools) {
        StoredCatalog catalog = new StoredCatalog(tools, clock.instant());
        return catalogs.catalog(key).map(StoredCatalog::tools).defaultIfEmpty(List.of())
                .flatMap(before -> catalogs.saveCatalog(key, catalog).then(Mono.fromRunnable(() -> {
                    if (!before.equals(catalog.tools())) {
                        announce(key.integration());
                    }
                })))
                .thenReturn(new ConnectionTools(key, catalog.tools()));
    }

    private void announce(String integration) {
        // Syncs end on several threads at once: wait out another emission rather than lose this one.
        changes.emitNext(integration, Sinks.EmitFailureHandler.busyLooping(java.time.Duration.ofMillis(100)));
    }

    private Mono<ConnectionTools> preserve(ConnectionKey key, @Nullable String reason) {
        log.warn("tool sync of {} preserved the stored catalog: {}", key, reason);
        return connections.saveHealth(key, HealthVerdict.degraded(clock.millis(), "tool sync failed, catalog preserved: " + reason))
                .then(catalogs.catalog(key))
                .map(StoredCatalog::tools)
                .defaultIfEmpty(List.of())
                .map(tools -> new ConnectionTools(key, tools));
    }

    @Override
    public void start() {
        running.add(jobs.asFlux()
                .flatMap(this::run, properties.syncConcurrency())
                .subscribe(null, error -> log.error("catalog sync runner stopped", error)));
        running.add(sessions.toolsChanged()
                .subscribe(key -> {
                    announcedChanged.add(key);
                    // Synced at once on the session that announced it, so that the catalog in the store, which other
                    // replicas read, is the new one; an agent here that lists meanwhile joins this sync.
                    sync(key, true);
                    announce(key.integration());
                }, error -> log.error("tools/list_changed listener stopped", error)));
    }

    @Override
    public void stop() {
        running.dispose();
    }

    /** Runs before the web server takes requests. */
    @Override
    public int getPhase() {
        return 10;
    }

    @Override
    public boolean isRunning() {
        return running.size() > 0 && !running.isDisposed();
    }
}
