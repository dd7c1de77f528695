package dev.tether.health;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.tether.identity.Principals;
import dev.tether.mcp.AuthorizationExpiredException;
import dev.tether.mcp.McpSession;
import dev.tether.session.IntegrationServers;
import dev.tether.session.NotAnMcpServerException;
import dev.tether.session.SessionPool;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionNotFoundException;
import dev.tether.store.ConnectionStore;
import dev.tether.store.HealthVerdict;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationNotFoundException;
import dev.tether.store.Owner;

/**
 * Connection health checks. For MCP a check is liveness: a ping on the connection's pooled session.
 *
 * <p>Concurrent checks of one connection share one probe. Batch checks form <em>generations</em>, each user's apart: a
 * user's newer generation supersedes their older one, dropping its unstarted checks, while a check both want is
 * joined, not restarted (a check nobody waits for lingers briefly for exactly that). Another user's batch supersedes
 * nothing of theirs: it checks the connections that user sees. Every verdict is
 * persisted as the connection's {@code lastHealth} and published on {@link #events()}.
 */
@Component
public final class HealthService implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(HealthService.class);

    /**
     * A batch of checks, and its verdicts as they come, kept for whoever observes it: the runner is their only
     * producer, and completes them when the generation is done or superseded. Nothing counts verdicts, so a
     * connection deleted mid-generation (no verdict) cannot keep the batch open.
     */
    private record Generation(long id, String asker, List<ConnectionKey> keys, Sinks.Many<HealthEvent> verdicts) {
    }

    private final SessionPool sessions;
    private final ConnectionStore connections;
    private final HealthProperties properties;
    private final Clock clock;
    private final MeterRegistry registry;
    private final OwnerChecks owners;
    private final Map<ConnectionKey, Mono<HealthVerdict>> inFlight = new ConcurrentHashMap<>();
    /**
     * Checks sent to a connection's owner, apart from those here: a check a peer asked of this replica runs here and
     * never joins one this replica sent to that peer, or two replicas whose lease snapshots differ would wait on each other.
     */
    private final Map<ConnectionKey, Mono<HealthVerdict>> inFlightAtOwner = new ConcurrentHashMap<>();
    private final Sinks.Many<HealthEvent> verdicts = Sinks.many().multicast().directBestEffort();
    private final Sinks.Many<Generation> generations = Sinks.many().unicast().onBackpressureBuffer();
    private final AtomicLong generationIds = new AtomicLong();
    private final Map<String, Counter> checks = new ConcurrentHashMap<>();
    private volatile @Nullable Disposable generationRunner;

    public HealthService(SessionPool sessions, ConnectionStore connections, HealthProperties properties, Clock clock,
            MeterRegistry registry, OwnerChecks owners) {
        this.sessions = sessions;
        this.connections = connections;
        this.properties = properties;
        this.clock = clock;
        this.registry = registry;
        this.owners = owners;
    }

    /**
     * Checks a connection here; with {@code ifStale}, a persisted verdict younger than that is returned without
     * probing. Cancelling stops waiting; the probe itself stops too unless someone else waits for it. For a request the
     * API has already passed to the connection's owner, or that a peer passed here.
     */
    public Mono<HealthVerdict> check(ConnectionKey key, Optional<Duration> ifStale) {
        // Without ifStale, join the shared probe at once: a store lookup first would let a burst of checks
        // trickle in one by one and start probe after probe. The probe itself fails for an unknown connection.
        Mono<HealthVerdict> verdict = ifStale.isEmpty() ? Mono.defer(() -> shared(key, true))
                : connections.find(key)
                        .switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key)))
                        .flatMap(connection -> fresh(connection, ifStale)
                                .map(cached -> Mono.just(cached).doOnNext(v -> count("cached")))
                                .orElseGet(() -> shared(key, true)));
        return verdict.doOnCancel(() -> count("cancelled"));
    }

    /**
     * Checks credentials that are not saved: a session of its own, ended after the ping. Nothing is persisted.
     */
    public Mono<HealthVerdict> validate(Integration integration, Map<String, String> credentials) {
        return sessions.withUnpooledSession(IntegrationServers.of(integration, credentials), McpSession::ping)
                .timeout(properties.timeout())
                .then(Mono.fromSupplier(() -> HealthVerdict.healthy(clock.millis())))
                .onErrorResume(error -> Mono.fromSupplier(() -> verdict(error)));
    }

    /**
     * Checks the matching connections as one generation, superseding any generation still running, and emits
     * the verdicts of this generation as they come. Completes when the generation is done or superseded.
     * Cancelling this Flux only stops observing: the generation runs on until done or superseded. Beside other
     * replicas, a connection another replica owns is checked there ({@link OwnerChecks}).
     */
    public Flux<HealthEvent> checkAll(Optional<String> integration, Optional<Owner> owner) {
        return Principals.current().flatMapMany(caller -> connections.all(integration, owner)
                .map(Connection::key)
                .collectList()
                .flatMapMany(keys -> {
                    if (keys.isEmpty()) {
                        return Flux.empty();
                    }
                    Generation generation = new Generation(generationIds.incrementAndGet(), caller.subject(), keys,
                            Sinks.many().replay().all());
                    return generation.verdicts().asFlux().doOnSubscribe(subscription -> start(generation));
                }));
    }

    /** Callers on many threads start generations; the lock makes their emissions take turns instead of spinning. */
    private void start(Generation generation) {
        synchronized (generations) {
            generations.tryEmitNext(generation);
        }
    }

    /**
     * Every verdict reached from now on, of single and batch checks alike, each once; beside other replicas on one
     * store, theirs too (generation 0), as soon as this replica reads them from the store.
     */
    public Flux<HealthEvent> events() {
        // Only the connections the subscriber sees: another user's personal connection is not its business.
        return Principals.current().flatMapMany(caller -> Flux.merge(verdicts.asFlux(), connections.verdictsOfPeers()
                        .map(connection -> new HealthEvent(0, connection.key(), connection.lastHealth().orElseThrow())))
                .filter(event -> caller.sees(event.key().subject())));
    }

    private Optional<HealthVerdict> fresh(Connection connection, Optional<Duration> ifStale) {
        return ifStale.flatMap(maxAge -> connection.lastHealth()
                .filter(verdict -> clock.millis() - verdict.checkedAt() < maxAge.toMillis()));
    }

    /** The probe of a connection, {@code here} or at its owner, joined when one is already running. */
    private Mono<HealthVerdict> shared(ConnectionKey key, boolean here) {
        boolean[] started = { false };
        Optional<Mono<HealthVerdict>> atOwner = here ? Optional.empty() : owners.atOwner(key, Mono.defer(() -> probe(key)));
        Map<ConnectionKey, Mono<HealthVerdict>> running = atOwner.isPresent() ? inFlightAtOwner : inFlight;
        Mono<HealthVerdict> probe = running.computeIfAbsent(key, k -> {
            started[0] = true;
            return sharedProbe(k, here, atOwner, running);
        });
        if (!started[0]) {
            count("coalesced");
        }
        return probe;
    }

    private Mono<HealthVerdict> sharedProbe(ConnectionKey key, boolean here, Optional<Mono<HealthVerdict>> atOwner,
            Map<ConnectionKey, Mono<HealthVerdict>> running) {
        AtomicReference<Mono<HealthVerdict>> self = new AtomicReference<>();
        Runnable forget = () -> running.remove(key, self.get());
        Mono<HealthVerdict> shared = atOwner.map(owner -> checkedAtOwner(key, owner)).orElseGet(() -> probe(key))
                // Forget the probe before anyone sees its end, so that a later asker starts a new one.
                .doOnEach(signal -> forget.run())
                .doOnCancel(forget)
                .flux()
                .publish()
                .refCount(1, properties.linger())
                // Ends with the probe's completion, not by cancelling after its verdict: a cancellation would
                // arm the linger timer of every probe that ended normally.
                .singleOrEmpty()
                // publish() replays nothing: an asker that joins as the probe ends sees it complete without the
                // verdict. The probe is forgotten by then, so asking again starts (or joins) the next one.
                .switchIfEmpty(Mono.defer(() -> shared(key, here)));
        self.set(shared);
        return shared;
    }

    /**
     * Another replica owns the connection's session: it checks, stores and announces the verdict (which reaches this
     * replica's event stream from the store), and this one passes it to the batch. An owner that does not answer gives
     * the batch an {@code unknown} verdict that is neither stored nor announced: nothing was learnt of the server.
     */
    private Mono<HealthVerdict> checkedAtOwner(ConnectionKey key, Mono<HealthVerdict> atOwner) {
        return atOwner
                .onErrorResume(error -> Mono.fromSupplier(() -> {
                    log.warn("batch check of {} at its owner failed, its verdict stays unknown here: {}", key, error.getMessage());
                    return new HealthVerdict("unknown", clock.millis(),
                            Optional.of("the replica that owns this connection did not check it: " + error.getMessage()));
                }))
                .doOnNext(verdict -> count("owner"));
    }

    private Mono<HealthVerdict> probe(ConnectionKey key) {
        // One timer per check, the ping's own: the check's bound applies only while its server is still starting.
        return sessions.withSession(key, properties.timeout(), McpSession::ping)
                .then(Mono.fromSupplier(() -> HealthVerdict.healthy(clock.millis())))
                // An HTTP source has no server to ping and no health probe in Executor either: its state is unknown.
                .onErrorResume(NotAnMcpServerException.class,
                        error -> Mono.fromSupplier(() -> new HealthVerdict("unknown", clock.millis(),
                                Optional.of(Objects.requireNonNull(error.getMessage())))))
                .onErrorResume(error -> !isLookupFailure(error),
                        error -> Mono.fromSupplier(() -> verdict(error)))
                .flatMap(verdict -> connections.saveHealth(key, verdict).thenReturn(verdict))
                .doOnNext(verdict -> {
                    count(verdict.status());
                    publish(new HealthEvent(0, key, verdict));
                });
    }

    /**
     * Probes end on many threads at once, and a sink refuses a concurrent emission ({@code FAIL_NON_SERIALIZED})
     * rather than queue it: the lock makes them take turns. It is held only for the hand-over to subscribers,
     * which never block (the event stream's subscribers are HTTP responses with buffers of their own).
     */
    private void publish(HealthEvent event) {
        synchronized (verdicts) {
            verdicts.tryEmitNext(event);
        }
    }

    /** A server whose authorization is over is {@code expired}, with what the user must do; any other failure degrades it. */
    private HealthVerdict verdict(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (e instanceof AuthorizationExpiredException expired) {
                return HealthVerdict.expired(clock.millis(), Objects.requireNonNull(expired.getMessage()));
            }
        }
        return HealthVerdict.degraded(clock.millis(), describe(error));
    }

    /** What went wrong, in words; an error without a message (a bug's NullPointerException) is named by its type. */
    private String describe(Throwable error) {
        if (error instanceof TimeoutException) {
            return "health check timed out after " + properties.timeout().toMillis() + "ms waiting for the server to start";
        }
        String message = error.getMessage();
        return message != null ? message : error.getClass().getSimpleName();
    }

    private static boolean isLookupFailure(Throwable error) {
        return error instanceof ConnectionNotFoundException || error instanceof IntegrationNotFoundException;
    }

    private void count(String outcome) {
        checks.computeIfAbsent(outcome, o -> Counter.builder("tether.health.checks").tag("outcome", o)
                .description("connection health checks by outcome").register(registry)).increment();
    }

    /** The generation's checks; its verdicts go to its observers, one emitter at a time (flatMap serialises). */
    private Flux<HealthEvent> run(Generation generation) {
        return Flux.fromIterable(generation.keys())
                .flatMap(key -> shared(key, false)
                        .map(verdict -> new HealthEvent(generation.id(), key, verdict))
                        // Only a lookup failure gets here (a connection deleted since the generation was formed).
                        .onErrorResume(error -> Mono.empty()), properties.concurrency())
                .doOnNext(generation.verdicts()::tryEmitNext)
                // Done, or superseded (switchMap cancels it): either way its observers are finished.
                .doFinally(signal -> generation.verdicts().tryEmitComplete());
    }

    @Override
    public void start() {
        // Each user's generations in a line of their own: one user's batch never drops another's checks.
        generationRunner = generations.asFlux()
                .groupBy(Generation::asker)
                .flatMap(asker -> asker.switchMap(this::run), Integer.MAX_VALUE)
                .subscribe(null, error -> log.error("health generations stopped", error));
    }

    @Override
    public void stop() {
        Disposable runner = generationRunner;
        if (runner != null) {
            runner.dispose();
        }
    }

    /** Runs before the web server takes requests. */
    @Override
    public int getPhase() {
        return 10;
    }

    @Override
    public boolean isRunning() {
        Disposable runner = generationRunner;
        return runner != null && !runner.isDisposed();
    }
}
