package dev.tether.session;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

import dev.tether.mcp.McpServerException;
import dev.tether.mcp.McpSession;
import dev.tether.store.ConnectionKey;

/**
 * One warm session of a connection, shared by every lease. The pool's subscription to the session
 * ({@link #start}) owns the child: it ends, and the child with it, when the session is retired (idle,
 * broken, deleted, a half-made session nobody joined within {@code tether.session.abandoned-start-linger}) or when
 * the server dies.
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
    private final AtomicInteger leases = new AtomicInteger();
    private final ArrayDeque<Slot> queue = new ArrayDeque<>();
    /** Armed while the session idles. A lease leaves it armed, so that a busy session schedules nothing per request. */
    private final Disposable.Swap idleEviction = Disposables.swap();
    private final AtomicBoolean idleClockArmed = new AtomicBoolean();
    private final Disposable.Swap lifetime = Disposables.swap();
    private final Disposable.Swap abandonment = Disposables.swap();
    private volatile boolean isReady;
    private volatile boolean ended;
    private volatile long lastReleased;

    /**
     * @param opened          the session as {@code McpSessions.open} gives it: emits once ready, ends with the server
     * @param onToolsChanged  told when the server announces a new tool list
     */
    PooledSession(ConnectionKey key, Instant configChangedAt, Flux<McpSession> opened, SessionProperties properties,
            Scheduler timer, Consumer<ConnectionKey> onToolsChanged) {
        this.key = key;
        this.configChangedAt = configChangedAt;
        this.properties = properties;
        this.timer = timer;
        // flatMap, not concatMap: concatMap requests the next element only when the inner ends, which this one
        // never does, and without demand the server's exit, signalled after the session, would never arrive.
        this.opened = opened.flatMap(session -> Flux.just(session).concatWith(session.toolsChanged()
                .doOnNext(tools -> onToolsChanged.accept(key))
                .thenMany(Flux.empty())));
        this.lastReleased = timer.now(TimeUnit.MILLISECONDS);
    }

    /** Starts the server. The pool calls this once, after the session won its place in the pool. */
    void start(Consumer<PooledSession> onEnd) {
        lifetime.update(opened
                .takeUntilOther(retirement.asMono())
                .doFinally(signal -> {
                    ended = true;
                    idleEviction.dispose();
                    abandonment.dispose();
                    // Out of the pool before anyone hears of it: a waiter that retries must find room, not us.
                    onEnd.accept(this);
                    ready.tryEmitError(new SessionRetiredException(key, "it ended before it was ready"));
                })
                .subscribe(session -> {
                    isReady = true;
                    abandonment.dispose();
                    ready.tryEmitValue(session);
                    if (leases.get() == 0) {
                        // Every asker left during the start: it is the warm session now, and idles out like any.
                        startIdleClock();
                    }
                }, error -> {
                    ready.tryEmitError(error);
                    log.debug("session of {} ended: {}", key, error.toString());
                }));
    }

    /**
     * Runs {@code body} on the session. At {@code max-leases-per-session} the asker waits its turn, first come
     * first served, for at most {@code lease-wait}; with {@code readyWithin}, it waits at most that long for a
     * server still starting (which goes on starting for the next asker). A lease that completes or is cancelled
     * leaves a healthy session for the next; a lease whose server failed or timed out retires the session.
     */
    <T> Mono<T> lease(Optional<Duration> readyWithin, Function<McpSession, Mono<T>> body) {
        return Mono.usingWhen(slot(), slot -> session(readyWithin).flatMap(body),
                Slot::free,
                (slot, error) -> error instanceof McpServerException ? retire("lease failed: " + error.getMessage()).then(slot.free())
                        : slot.free(),
                Slot::free);
    }

    /** The session once ready; only a wait for a start costs a timer, a warm session is handed over at once. */
    private Mono<McpSession> session(Optional<Duration> readyWithin) {
        return isReady || readyWithin.isEmpty() ? ready.asMono() : ready.asMono().timeout(readyWithin.get(), timer);
    }

    /** Askers waiting for a lease now. */
    int waiting() {
        synchronized (queue) {
            return queue.size();
        }
    }

    /** Ends the session unless it is in use; true when it was idle and is now retiring. */
    boolean retireIfIdle(String reason) {
        if (leases.get() == 0) {
            retirement.tryEmitEmpty();
            log.debug("retiring session of {}: {}", key, reason);
            return true;
        }
        return false;
    }

    /** Ends the session now, in use or not. */
    Mono<Void> retire(String reason) {
        return Mono.fromRunnable(() -> {
            if (retirement.tryEmitEmpty().isSuccess()) {
                log.debug("retiring session of {}: {}", key, reason);
            }
        });
    }

    ConnectionKey key() {
        return key;
    }

    Instant configChangedAt() {
        return configChangedAt;
    }

    boolean ended() {
        return ended;
    }

    int leases() {
        return leases.get();
    }

    long lastReleased() {
        return lastReleased;
    }

    /**
     * One asker's claim on a lease: granted at once below the cap, else queued. Whoever moves it out of
     * {@code WAITING} decides what happens to the place: a grant hands it over, a cancellation gives it up, and
     * freeing a granted slot (once, whoever comes first: the lease's end or its cancellation) passes it on.
     */
    private final class Slot {

        private static final int WAITING = 0;
        private static final int GRANTED = 1;
        private static final int CANCELLED = 2;
        private static final int FREED = 3;

        private final AtomicInteger state;
        private final MonoSink<Slot> sink;
        private final Disposable.Swap deadline = Disposables.swap();

        Slot(MonoSink<Slot> sink, boolean granted) {
            this.sink = sink;
            this.state = new AtomicInteger(granted ? GRANTED : WAITING);
        }

        boolean grant() {
            if (state.compareAndSet(WAITING, GRANTED)) {
                deadline.dispose();
                sink.success(this);
                return true;
            }
            return false;
        }

        /** The asker left: a waiter leaves the queue at once, a granted place is passed on. */
        void cancel() {
            if (!leaveQueue()) {
                free().subscribe();
            }
        }

        void expire() {
            if (leaveQueue()) {
                sink.error(refusal("none came free within " + properties.leaseWait() + " (tether.session.lease-wait)"));
            }
        }

        private boolean leaveQueue() {
            if (state.compareAndSet(WAITING, CANCELLED)) {
                deadline.dispose();
                synchronized (queue) {
                    queue.remove(this);
                }
                return true;
            }
            return false;
        }

        Mono<Void> free() {
            return Mono.fromRunnable(() -> {
                if (state.compareAndSet(GRANTED, FREED)) {
                    handOver();
                }
            });
        }
    }

    private Mono<Slot> slot() {
        return Mono.create(sink -> {
            Slot claim;
            boolean now = false;
            synchronized (queue) {
                if (leases.get() < properties.maxLeasesPerSession()) {
                    leases.incrementAndGet();
                    claim = new Slot(sink, true);
                    now = true;
                }
                else if (queue.size() >= properties.maxLeaseWaiters()) {
                    sink.error(refusal(properties.maxLeaseWaiters() + " more are already waiting (tether.session.max-lease-waiters)"));
                    return;
                }
                else {
                    claim = new Slot(sink, false);
                    queue.add(claim);
                }
            }
            sink.onCancel(claim::cancel);
            if (now) {
                sink.success(claim);
            }
            else {
                // Only a waiter pays for a timer; a lease granted at once schedules nothing.
                claim.deadline.update(timer.schedule(claim::expire, properties.leaseWait().toMillis(), TimeUnit.MILLISECONDS));
            }
        });
    }

    private SessionLimitException refusal(String why) {
        return new SessionLimitException("tether.session.max-leases-per-session", "connection " + key + " already has "
                + properties.maxLeasesPerSession() + " requests in flight (tether.session.max-leases-per-session) and "
                + why);
    }

    /** A lease ended: its place goes to the longest waiter, or back to the session. */
    private void handOver() {
        while (true) {
            Slot next;
            synchronized (queue) {
                next = queue.poll();
                if (next == null) {
                    leases.decrementAndGet();
                    break;
                }
            }
            if (next.grant()) {
                return;
            }
        }
        if (leases.get() == 0) {
            if (!isReady && !ended) {
                abandoned();
            }
            else if (!ended) {
                startIdleClock();
            }
        }
    }

    /**
     * Every asker of the half-made session left. The start goes on for a while: an app that reloads faster than a
     * server starts asks again within seconds, and joining the start it left costs nothing where starting afresh
     * costs a child per reload. The pool's subscription keeps owning it; the linger runs from the last departure.
     */
    private void abandoned() {
        Duration linger = properties.abandonedStartLinger();
        log.debug("every asker of the half-made session of {} left; it goes on for {} for the next to join", key, linger);
        abandonment.update(timer.schedule(this::giveUpIfAbandoned, linger.toMillis(), TimeUnit.MILLISECONDS));
    }

    private void giveUpIfAbandoned() {
        if (leases.get() == 0 && !isReady && retirement.tryEmitEmpty().isSuccess()) {
            log.debug("nobody joined the half-made session of {} within {}; tearing it down", key,
                    properties.abandonedStartLinger());
        }
    }

    /** The session idles from now: its clock is armed unless it already is (it then finds the later release). */
    private void startIdleClock() {
        lastReleased = timer.now(TimeUnit.MILLISECONDS);
        armIdleClock(properties.idleTtl().toMillis());
    }

    private void armIdleClock(long delayMillis) {
        if (idleClockArmed.compareAndSet(false, true)) {
            idleEviction.update(timer.schedule(this::idleClockRang, delayMillis, TimeUnit.MILLISECONDS));
        }
    }

    /**
     * Leases came and went since the clock was armed: an idle session retires if its last release is a TTL old,
     * else the clock waits out the rest; a session in use leaves it unarmed until its next release. Disarmed
     * first, so that a release racing this finds the clock free to arm.
     */
    private void idleClockRang() {
        idleClockArmed.set(false);
        if (leases.get() > 0) {
            return;
        }
        long rest = properties.idleTtl().toMillis() - (timer.now(TimeUnit.MILLISECONDS) - lastReleased);
        if (rest > 0) {
            armIdleClock(rest);
        }
        else {
            retireIfIdle("idle for " + properties.idleTtl());
        }
    }
}
