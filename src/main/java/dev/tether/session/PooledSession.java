package dev.tether.session;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;

import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.pool.PooledRef;

import dev.tether.mcp.McpServerException;
import dev.tether.mcp.McpSession;
import dev.tether.store.ConnectionKey;

/**
 * One warm session of a connection, shared by every lease. The pool's subscription to the session
 * ({@link #start}) owns the child: it ends, and the child with it, when the session is retired (idle,
 * broken, deleted, a half-made session nobody joined within {@code tether.session.abandoned-start-linger}) or when
 * the server dies. Askers wait their turn in its {@link LeaseLine}; its {@link IdleClock} says when it idled out.
 */
final class PooledSession {

    private static final Logger log = LoggerFactory.getLogger(PooledSession.class);

    private final ConnectionKey key;
    private final Instant configChangedAt;
    private final Flux<McpSession> opened;
    private final SessionProperties properties;
    private final Scheduler timer;
    private final Sinks.One<McpSession> ready = Sinks.one();
    private final Sinks.Empty<Void> retirement = Sinks.empty();
    private final LeaseLine line;
    private final IdleClock idleClock;
    private final BooleanSupplier othersWait;
    /** Leases granted and not yet ended; with {@link #retiring}, guarded by {@code this}: a lease and a retirement never cross. */
    private int leases;
    private boolean retiring;
    /** Why to retire it once its last lease ends ({@link #retireOnceIdle}); null if not; guarded by {@code this}. */
    private @Nullable String retireWhenIdle;
    /** Set when every asker of the start left ({@link #abandoned()}); guarded by {@code this}. */
    private boolean everyAskerLeft;
    private final Disposable.Swap lifetime = Disposables.swap();
    private final Disposable.Swap abandonment = Disposables.swap();
    private volatile boolean isReady;
    private volatile boolean ended;

    /**
     * @param opened          the session as {@code McpSessions.open} gives it: emits once ready, ends with the server
     * @param onToolsChanged  told when the server announces a new tool list
     * @param othersWait      whether a start of another session waits for a place: an idle session then gives way
     */
    PooledSession(ConnectionKey key, Instant configChangedAt, Flux<McpSession> opened, SessionProperties properties,
            Scheduler timer, Consumer<ConnectionKey> onToolsChanged, BooleanSupplier othersWait) {
        this.key = key;
        this.othersWait = othersWait;
        this.line = new LeaseLine(key, properties, timer);
        this.idleClock = new IdleClock(timer, properties.idleTtl(), this::idle, () -> retireIfIdle("idle for " + properties.idleTtl()));
        this.configChangedAt = configChangedAt;
        this.properties = properties;
        this.timer = timer;
        // flatMap, not concatMap: concatMap requests the next element only when the inner ends, which this one
        // never does, and without demand the server's exit, signalled after the session, would never arrive.
        this.opened = opened.flatMap(session -> Flux.just(session).concatWith(session.toolsChanged()
                .doOnNext(tools -> onToolsChanged.accept(key))
                .thenMany(Flux.empty())));
    }

    /**
     * Starts the server. The pool calls this once, after the session won its place in the pool; {@code cause} is the
     * observation of the asker that made it start, under which the start's spans go.
     */
    void start(Consumer<PooledSession> onEnd, Optional<Observation> cause) {
        lifetime.update(opened
                .takeUntilOther(retirement.asMono())
                .contextWrite(context -> cause.map(parent -> context.put(ObservationThreadLocalAccessor.KEY, parent)).orElse(context))
                // Out of the pool before anyone hears of the end: an asker told of a failed start who asks again
                // must start afresh, not join this session and be told the same failure again. doOnError runs
                // before the subscriber below passes the error on; doFinally only after.
                .doOnError(error -> ended(onEnd))
                .doFinally(signal -> {
                    ended(onEnd);
                    ready.tryEmitError(new SessionRetiredException(key, "it ended before it was ready"));
                })
                .subscribe(session -> {
                    isReady = true;
                    abandonment.dispose();
                    ready.tryEmitValue(session);
                    if (idle()) {
                        // Every asker left during the start: it is the warm session now, and idles out like any.
                        wentIdle();
                    }
                }, error -> {
                    ready.tryEmitError(error);
                    log.debug("session of {} ended: {}", key, error.toString());
                }));
    }

    /** The session is over: retiring for every new asker, its clocks stopped, out of the pool. Once or more. */
    private void ended(Consumer<PooledSession> onEnd) {
        synchronized (this) {
            ended = true;
            retiring = true;
        }
        idleClock.stop();
        abandonment.dispose();
        onEnd.accept(this);
    }

    /**
     * Runs {@code body} on the session. At {@code max-leases-per-session} the asker waits its turn, first come
     * first served, for at most {@code lease-wait}; with {@code readyWithin}, it waits at most that long for a
     * server still starting (which goes on starting for the next asker). A lease that completes or is cancelled
     * leaves a healthy session for the next; a lease whose server failed or timed out retires the session.
     */
    <T> Mono<T> lease(Optional<Duration> readyWithin, Function<McpSession, Mono<T>> body) {
        return Mono.usingWhen(line.place().map(Lease::new), lease -> count(lease).then(session(readyWithin)).flatMap(body),
                this::end,
                (lease, error) -> error instanceof McpServerException
                        ? retire("lease failed: " + error.getMessage()).then(end(lease)) : end(lease),
                this::end);
    }

    /** One asker's place among {@code max-leases-per-session}, and whether it counts as a lease of the session. */
    private static final class Lease {

        private final PooledRef<Object> place;
        private boolean counted;

        Lease(PooledRef<Object> place) {
            this.place = place;
        }
    }

    /**
     * The lease counts only while the session is not retiring: checked under the lock that retiring an idle session
     * takes, so no lease is ever granted on a session that is going away (the asker gets
     * {@link SessionRetiredException} and the pool starts a fresh session for it).
     */
    private Mono<Void> count(Lease lease) {
        return Mono.defer(() -> {
            synchronized (this) {
                if (!retiring) {
                    leases++;
                    lease.counted = true;
                    return Mono.empty();
                }
            }
            // A start that failed (no place, no server) answers why; a session that served and went away is retried.
            return ended && !isReady ? ready.asMono().then() : Mono.error(new SessionRetiredException(key, "it is being retired"));
        });
    }

    /** A lease ended: its place goes to the longest waiter, or back; a session nobody uses then idles. */
    private Mono<Void> end(Lease lease) {
        return Mono.defer(() -> {
            synchronized (this) {
                if (lease.counted) {
                    lease.counted = false;
                    leases--;
                }
            }
            return lease.place.release();
        }).then(Mono.fromRunnable(() -> {
            if (!idle() || ended) {
                return;
            }
            String moved = retireWhenIdle();
            if (moved != null && retireIfIdle(moved)) {
                return;
            }
            if (othersWait.getAsBoolean() && retireIfIdle("another session waits for a place (tether.session.max-sessions)")) {
                return;
            }
            if (!isReady) {
                abandoned();
            }
            else {
                wentIdle();
            }
        }));
    }

    private synchronized boolean idle() {
        return leases == 0;
    }

    private synchronized @Nullable String retireWhenIdle() {
        return retireWhenIdle;
    }

    /**
     * Ends the session now if it is idle, else once its last lease ends (its requests in flight are answered); true
     * when it is retiring now.
     */
    boolean retireOnceIdle(String reason) {
        synchronized (this) {
            if (leases > 0 && !retiring) {
                retireWhenIdle = reason;
                return false;
            }
        }
        return retireIfIdle(reason);
    }

    /** The session once ready; only a wait for a start costs a timer, a warm session is handed over at once. */
    private Mono<McpSession> session(Optional<Duration> readyWithin) {
        return isReady || readyWithin.isEmpty() ? ready.asMono() : ready.asMono().timeout(readyWithin.get(), timer);
    }

    /** Askers waiting for a lease now. */
    int waiting() {
        return line.waiting();
    }

    /** Ends the session unless it is in use or already going; true when it was idle and is now retiring. */
    boolean retireIfIdle(String reason) {
        synchronized (this) {
            if (leases > 0 || retiring) {
                return false;
            }
            retiring = true;
        }
        retirement.tryEmitEmpty();
        log.debug("retiring session of {}: {}", key, reason);
        return true;
    }

    /** Ends the session now, in use or not. */
    Mono<Void> retire(String reason) {
        return Mono.fromRunnable(() -> {
            synchronized (this) {
                retiring = true;
            }
            if (retirement.tryEmitEmpty().isSuccess()) {
                log.debug("retiring session of {}: {}", key, reason);
            }
        });
    }

    /** Whether it is retiring or ended: a new asker needs a fresh session. */
    synchronized boolean retiring() {
        return retiring || ended;
    }

    /**
     * Whether nobody uses it now: idle, or a start every asker left. Not a start whose first asker is still on its
     * way (it has no lease yet either): that one would give way to itself.
     */
    synchronized boolean unused() {
        return leases == 0 && !retiring && !ended && (isReady || everyAskerLeft);
    }

    ConnectionKey key() {
        return key;
    }

    Instant configChangedAt() {
        return configChangedAt;
    }

    long lastReleased() {
        return idleClock.lastReleased();
    }

    /**
     * Every asker of the half-made session left. The start goes on for a while: an app that reloads faster than a
     * server starts asks again within seconds, and joining the start it left costs nothing where starting afresh
     * costs a child per reload. The pool's subscription keeps owning it; the linger runs from the last departure.
     */
    private void abandoned() {
        synchronized (this) {
            everyAskerLeft = true;
        }
        Duration linger = properties.abandonedStartLinger();
        log.debug("every asker of the half-made session of {} left; it goes on for {} for the next to join", key, linger);
        abandonment.update(timer.schedule(this::giveUpIfAbandoned, linger.toMillis(), TimeUnit.MILLISECONDS));
    }

    private void giveUpIfAbandoned() {
        synchronized (this) {
            if (leases > 0 || isReady) {
                return;
            }
            retiring = true;
        }
        if (retirement.tryEmitEmpty().isSuccess()) {
            log.debug("nobody joined the half-made session of {} within {}; tearing it down", key,
                    properties.abandonedStartLinger());
        }
    }

    /** The session idles from now, unless another session waits for a place: it then gives way at once. */
    private void wentIdle() {
        if (othersWait.getAsBoolean() && retireIfIdle("another session waits for a place (tether.session.max-sessions)")) {
            return;
        }
        idleClock.released();
    }
}
