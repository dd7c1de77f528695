package dev.tether.session;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.ContextView;
import reactor.util.retry.Retry;

import dev.tether.mcp.McpSession;
import dev.tether.mcp.McpServer;
import dev.tether.mcp.McpSessions;
import dev.tether.mcp.StdioServer;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionNotFoundException;
import dev.tether.store.ConnectionStore;
import dev.tether.store.CredentialStore;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationNotFoundException;
import dev.tether.store.IntegrationStore;
import dev.tether.tracing.Spans;

/**
 * One warm MCP session per connection, shared by health checks, catalog syncs and tool calls: where the
 * original spawned a child for each, a refresh storm here costs at most one child per connection.
 * Creating a session is single-flight; a session nobody uses is torn down after
 * {@code tether.session.idle-ttl}. The pool counts at most {@code tether.session.max-sessions} children, its own
 * and the one-off sessions' ({@link #withUnpooledSession}), each from before its spawn until its teardown ended
 * ({@link ChildPlaces}, on reactor-pool); a session's leases are bounded by {@code max-leases-per-session}, with a
 * bounded line ({@link LeaseLine}, on reactor-pool too).
 *
 * <p>Ownership: this pool, one per daemon, owns every warm session and the subscription that keeps its child alive;
 * a lease borrows the session and never ends it, except that a lease whose server failed retires it. Nothing else
 * starts an MCP session for a stored connection.
 */
@Component
public final class SessionPool {

    private static final int FENCED_RETRIES = 2;

    private final IntegrationStore integrations;
    private final ConnectionStore connections;
    private final CredentialStore credentials;
    private final McpSessions sessions;
    private final BearerTokens tokens;
    private final SessionProperties properties;
    private final Scheduler timer;
    private final Map<ConnectionKey, PooledSession> pool = new ConcurrentHashMap<>();
    /**
     * Per connection, the end of its last session's child (its teardown ended, container removed included), which the
     * next session's start waits for: a retired session tears down for a second or more, and a request meanwhile must
     * not give the connection a second child (a second container) beside it. Removed once that child is gone.
     */
    private final Map<ConnectionKey, Mono<Void>> lastChildGone = new ConcurrentHashMap<>();
    private final ChildPlaces places;
    private final StartFence fence;
    private final ObservationRegistry observations;
    private final Sinks.Many<ConnectionKey> toolsChanged = Sinks.many().multicast().directBestEffort();

    /** {@code observations} gets a span for each lease, the parent of the session start it causes ({@link Spans}). */
    @Autowired
    public SessionPool(IntegrationStore integrations, ConnectionStore connections, CredentialStore credentials,
            McpSessions sessions, BearerTokens tokens, SessionProperties properties, MeterRegistry registry, StartFence fence,
            ObservationRegistry observations) {
        this(integrations, connections, credentials, sessions, tokens, properties, registry, Schedulers.parallel(), fence, observations);
    }

    SessionPool(IntegrationStore integrations, ConnectionStore connections, CredentialStore credentials,
            McpSessions sessions, BearerTokens tokens, SessionProperties properties, MeterRegistry registry, Scheduler timer) {
        this(integrations, connections, credentials, sessions, tokens, properties, registry, timer, StartFence.NONE,
                ObservationRegistry.NOOP);
    }

    SessionPool(IntegrationStore integrations, ConnectionStore connections, CredentialStore credentials,
            McpSessions sessions, BearerTokens tokens, SessionProperties properties, MeterRegistry registry, Scheduler timer,
            StartFence fence, ObservationRegistry observations) {
        this.observations = observations;
        this.fence = fence;
        this.tokens = tokens;
        this.integrations = integrations;
        this.connections = connections;
        this.credentials = credentials;
        this.sessions = sessions;
        this.properties = properties;
        this.timer = timer;
        this.places = new ChildPlaces(properties, timer, registry, this::makeRoom);
        Gauge.builder("tether.sessions.live", pool, Map::size).description("warm MCP sessions in the pool").register(registry);
        Gauge.builder("tether.sessions.lease.waiting", pool, live -> live.values().stream().mapToInt(PooledSession::waiting).sum())
                .description("requests waiting for a lease on a session at max-leases-per-session").register(registry);
    }

    /**
     * Runs {@code body} on the connection's warm session, starting the server when there is none. When every
     * asker of a session still being made cancels, the start goes on under the pool for
     * {@code tether.session.abandoned-start-linger}, for the next asker to join, and is torn down if none does;
     * cancelling later leaves the session warm for the next asker. Fails with a not-found error for an unknown
     * connection and with {@link SessionLimitException} when a cap is reached.
     */
    public <T> Mono<T> withSession(ConnectionKey key, Function<McpSession, Mono<T>> body) {
        return lease(key, Optional.empty(), body);
    }

    /**
     * As {@link #withSession(ConnectionKey, Function)}, waiting at most {@code readyWithin} for a server that is
     * still starting: the start goes on for whoever asks next, and this asker fails with a
     * {@link java.util.concurrent.TimeoutException}. A warm session is used at once, without a timer.
     */
    public <T> Mono<T> withSession(ConnectionKey key, Duration readyWithin, Function<McpSession, Mono<T>> body) {
        return lease(key, Optional.of(readyWithin), body);
    }

    private <T> Mono<T> lease(ConnectionKey key, Optional<Duration> readyWithin, Function<McpSession, Mono<T>> body) {
        return Spans.around(observations, "tether.session.lease", KeyValues.of("tether.connection", key.toString()), integrationOf(key)
                .flatMap(integration -> entry(key, integration).flatMap(entry -> entry.lease(readyWithin, body)))
                // An idle session may be retired between lookup and lease: take a fresh one, once.
                .retryWhen(Retry.max(1).filter(SessionRetiredException.class::isInstance)));
    }

    /**
     * Runs {@code body} on a session of its own, not shared, e.g. to try credentials that are not saved; its child
     * counts under {@code tether.session.max-sessions} like a pooled one, until its teardown ended.
     */
    public <T> Mono<T> withUnpooledSession(McpServer server, Function<McpSession, Mono<T>> body) {
        return places.holding("a one-off session of " + server.name(), teardowns -> sessions.open(server, teardowns))
                .concatMap(session -> body.apply(session).map(Optional::of).defaultIfEmpty(Optional.empty()))
                .next()
                .flatMap(Mono::justOrEmpty);
    }

    /** Emits a connection's key each time its server announces a changed tool list. */
    public Flux<ConnectionKey> toolsChanged() {
        return toolsChanged.asFlux();
    }

    /** Tears down the sessions of an integration, e.g. because it was deleted or re-configured. */
    public Mono<Void> retire(String integration) {
        return Flux.fromIterable(pool.values())
                .filter(entry -> entry.key().integration().equals(integration))
                .flatMap(entry -> entry.retire("integration " + integration + " changed or was removed"))
                .then();
    }

    /**
     * Retires the sessions of the connections {@code which} accepts (another replica owns them now): an idle one at
     * once, one in use once its last lease ends, so that its requests in flight are answered. Returns how many it
     * retired at once.
     */
    public int retireOnceIdle(Predicate<ConnectionKey> which, String reason) {
        return (int) pool.values().stream()
                .filter(entry -> which.test(entry.key()))
                .filter(entry -> entry.retireOnceIdle(reason))
                .count();
    }

    /**
     * Retires every session now, in use or not, and completes once the children of all of them, and of those already
     * retiring, are gone (teardowns ended, containers removed): what a replica that was taken for dead does before it
     * serves again. A start that waits meanwhile is not waited for: it is cancelled, or starts once its fence is clear.
     */
    public Mono<Void> retireAll(String reason) {
        return Mono.defer(() -> {
            List<Mono<Void>> gone = List.copyOf(lastChildGone.values());
            return Flux.fromIterable(pool.values()).flatMap(entry -> entry.retire(reason)).then(Mono.when(gone));
        });
    }

    /** Tears down the session of one connection. */
    public Mono<Void> retire(ConnectionKey key) {
        return Mono.justOrEmpty(pool.get(key)).flatMap(entry -> entry.retire("connection " + key + " changed or was removed"));
    }

    /** Live pooled sessions, for diagnostics and tests. */
    public int size() {
        return pool.size();
    }

    private Mono<Integration> integrationOf(ConnectionKey key) {
        return connections.find(key)
                .switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key)))
                .then(integrations.find(key.integration()))
                .switchIfEmpty(Mono.error(() -> new IntegrationNotFoundException(key.integration())));
    }

    private Mono<PooledSession> entry(ConnectionKey key, Integration integration) {
        return Mono.deferContextual(asker -> entry(key, integration, asker));
    }

    /**
     * The connection's live session, or a fresh one started now; a fresh session's start, which outlives its asker, is
     * traced under the asker's span (its lease's), where the wait for it shows.
     */
    private Mono<PooledSession> entry(ConnectionKey key, Integration integration, ContextView asker) {
        PooledSession existing = pool.get(key);
        if (existing != null && !existing.retiring() && existing.configChangedAt().equals(integration.configChangedAt())) {
            return Mono.just(existing);
        }
        // An ended or outdated session gives up its place here, not by asking again: asking again from inside
        // the session's own end would find it still in the pool, and recurse.
        Mono<Void> making = existing == null ? Mono.empty()
                : Mono.fromRunnable(() -> pool.remove(key, existing)).then(existing.retire("its configuration changed"));
        return making.then(connections.find(key).switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key))))
                .zipWith(credentials.credentials(key)).map(found -> {
            Map<String, String> values = found.getT2();
            McpServer server = IntegrationServers.of(integration, values, tokens.bearer(found.getT1())); // fails for an HTTP source
            Mono<Void> previousGone = lastChildGone.getOrDefault(key, Mono.empty());
            Sinks.Empty<Void> gone = Sinks.empty();
            Mono<Void> thisGone = gone.asMono();
            Runnable freed = () -> {
                lastChildGone.remove(key, thisGone);
                gone.tryEmitEmpty();
            };
            PooledSession fresh = new PooledSession(key, integration.configChangedAt(), afterPrevious(previousGone,
                    places.holding("connection " + key, teardowns -> fenced(key, server, teardowns), freed), freed),
                    properties, timer, this::announceToolsChanged, places::othersWait);
            PooledSession raced = pool.putIfAbsent(key, fresh);
            if (raced != null) {
                return raced; // another asker won; ours was never started, so there is nothing to clean up
            }
            lastChildGone.put(key, thisGone);
            fresh.start(ended -> pool.remove(key, ended), asker.<Observation>getOrEmpty(ObservationThreadLocalAccessor.KEY));
            return fresh;
        });
    }

    /**
     * The connection's session, its stdio child started once the fence is clear ({@link StartFence}: no other replica's
     * container of the connection runs on the engine). A start that fails before its session is ready and after which
     * the fence finds another's container in the way again starts once more, at most {@value #FENCED_RETRIES} times:
     * a dead replica's late {@code docker run} client can create its container between the fence's look and this
     * start, and the engine then refuses this one its name.
     */
    private Flux<McpSession> fenced(ConnectionKey key, McpServer server, Consumer<Mono<Void>> teardowns) {
        if (!(server instanceof StdioServer)) {
            return sessions.open(server, teardowns);
        }
        boolean container = sessions.runsContainer(server);
        return fence.clear(key, container)
                .flatMapMany(cleared -> startFenced(key, server, cleared.key(), container, teardowns, FENCED_RETRIES));
    }

    private Flux<McpSession> startFenced(ConnectionKey key, McpServer server, Optional<String> fenceKey, boolean container,
            Consumer<Mono<Void>> teardowns, int retries) {
        return Flux.defer(() -> {
            AtomicBoolean ready = new AtomicBoolean();
            return sessions.open(server, fenceKey, teardowns)
                    .doOnNext(session -> ready.set(true))
                    .onErrorResume(error -> !ready.get() && retries > 0 && container && fenceKey.isPresent(),
                            error -> fence.clear(key, true).flatMapMany(again -> again.foundOthers()
                                    ? startFenced(key, server, fenceKey, true, teardowns, retries - 1) : Flux.error(error)));
        });
    }

    /**
     * {@code opened} once {@code previousGone} completes; {@code freed} runs at once when it ends before it got that
     * far (every asker left while the previous child was still tearing down), as no place was held to give back.
     */
    private static Flux<McpSession> afterPrevious(Mono<Void> previousGone, Flux<McpSession> opened, Runnable freed) {
        return Flux.defer(() -> {
            AtomicBoolean opening = new AtomicBoolean();
            return previousGone.thenMany(Flux.defer(() -> {
                        opening.set(true);
                        return opened;
                    }))
                    .doFinally(signal -> {
                        if (!opening.get()) {
                            freed.run();
                        }
                    });
        });
    }

    /** Sessions announce on their own threads; the lock keeps the sink from refusing a concurrent emission. */
    private void announceToolsChanged(ConnectionKey key) {
        synchronized (toolsChanged) {
            toolsChanged.tryEmitNext(key);
        }
    }

    /**
     * Every place is taken: the least recently used idle session (or a start every asker left) gives way (its place comes free once its child is
     * gone). When every session is busy, the start waits in line for one that goes idle ({@link ChildPlaces}).
     */
    private void makeRoom() {
        pool.values().stream()
                .filter(PooledSession::unused)
                .sorted(Comparator.comparingLong(PooledSession::lastReleased))
                .anyMatch(entry -> entry.retireIfIdle("making room under tether.session.max-sessions"));
    }

    /** Children counted under {@code tether.session.max-sessions} now: pooled, one-off and tearing down. */
    public int children() {
        return places.taken();
    }
}
