package dev.tether.session;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.pool.InstrumentedPool;
import reactor.pool.PoolAcquirePendingLimitException;
import reactor.pool.PoolAcquireTimeoutException;
import reactor.pool.PoolBuilder;
import reactor.pool.PooledRef;

/**
 * The places for live children under {@code tether.session.max-sessions}, on reactor-pool: every pooled session and
 * every one-off (validation) session holds one from before its child is spawned until that child's teardown ended
 * (container removed included), so the cap counts what the OS and the Docker engine count, exactly.
 *
 * <p>A place is free, or a holder waits in line (at most {@code max-pending-starts}, first come first served) for
 * {@code start-wait}; while it waits, the least recently used idle session gives way ({@code makeRoom}), and any
 * session that goes idle while someone waits does too ({@link #othersWait()}).
 */
final class ChildPlaces {

    private static final Logger log = LoggerFactory.getLogger(ChildPlaces.class);
    /** The teardown ladder is bounded far below this; a place is never held for ever by a teardown that never reports. */
    private static final Duration TEARDOWN_BOUND = Duration.ofMinutes(2);

    private final InstrumentedPool<Object> places;
    private final SessionProperties properties;
    private final Runnable makeRoom;

    /** {@code makeRoom}: asked to retire an idle session when every place is taken. */
    ChildPlaces(SessionProperties properties, Scheduler timer, MeterRegistry registry, Runnable makeRoom) {
        this.properties = properties;
        this.makeRoom = makeRoom;
        this.places = PoolBuilder.from(Mono.fromSupplier(Object::new))
                .sizeBetween(0, properties.maxSessions())
                .maxPendingAcquire(properties.startWait().isZero() ? 0 : properties.maxPendingStarts())
                .pendingAcquireTimer((task, delay) -> timer.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS))
                .buildPool();
        InstrumentedPool.PoolMetrics metrics = places.metrics();
        Gauge.builder("tether.sessions.children", metrics, InstrumentedPool.PoolMetrics::acquiredSize)
                .description("children the session pool counts against max-sessions: pooled, one-off and tearing down")
                .register(registry);
        Gauge.builder("tether.sessions.starts.waiting", metrics, InstrumentedPool.PoolMetrics::pendingAcquireSize)
                .description("session starts waiting for a place under max-sessions").register(registry);
    }

    /**
     * The child(ren) {@code body} opens, each counted from before it is spawned until its teardown ended. {@code body}
     * gets where to report a child's teardown ({@code McpSessions.open}'s second argument).
     */
    <T> Flux<T> holding(String forWhat, Function<Consumer<Mono<Void>>, Flux<T>> body) {
        return holding(forWhat, body, () -> { });
    }

    /**
     * As {@link #holding(String, Function)}, running {@code freed} once the place is given back, or at once when none was
     * had (refused, or left while waiting in line); it may run more than once.
     */
    <T> Flux<T> holding(String forWhat, Function<Consumer<Mono<Void>>, Flux<T>> body, Runnable freed) {
        return Flux.defer(() -> {
            List<Mono<Void>> teardowns = new CopyOnWriteArrayList<>();
            return Flux.usingWhen(claim(forWhat).doOnError(refused -> freed.run()).doOnCancel(freed), place -> body.apply(teardowns::add),
                    place -> free(place, teardowns, freed), (place, error) -> free(place, teardowns, freed),
                    place -> free(place, teardowns, freed));
        });
    }

    /** Whether a start waits for a place now: an idle session then gives way. */
    boolean othersWait() {
        return places.metrics().pendingAcquireSize() > 0;
    }

    /** Places taken now (live children, those tearing down included). */
    int taken() {
        return places.metrics().acquiredSize();
    }

    private Mono<PooledRef<Object>> claim(String forWhat) {
        // In line first, then ask for room: a session that goes idle after this start is in line sees it waiting
        // (othersWait), and one that went idle before is found here. Asking before getting in line left a gap in
        // which neither saw the other, and the start waited out start-wait beside an idle session.
        Mono<Object> roomIfWaiting = Mono.fromRunnable(() -> {
            if (othersWait()) {
                makeRoom.run();
            }
        });
        return places.acquire(properties.startWait()).zipWith(roomIfWaiting.thenReturn(""), (place, ignored) -> place)
                .onErrorMap(PoolAcquireTimeoutException.class, late -> refusal(forWhat, "none came free within "
                        + properties.startWait() + " (tether.session.start-wait)"))
                .onErrorMap(PoolAcquirePendingLimitException.class, full -> refusal(forWhat, properties.startWait().isZero()
                        ? "may not wait (tether.session.start-wait is 0)"
                        : properties.maxPendingStarts() + " more starts are already waiting (tether.session.max-pending-starts)"));
    }

    private SessionLimitException refusal(String forWhat, String why) {
        return new SessionLimitException("tether.session.max-sessions", "cannot start a session for " + forWhat + ": all "
                + properties.maxSessions() + " places for children are in use (tether.session.max-sessions) and " + why);
    }

    /** The place is given back once every child it counted is gone, not when its session ended. */
    private static Mono<Void> free(PooledRef<Object> place, List<Mono<Void>> teardowns, Runnable freed) {
        return Mono.when(teardowns)
                .timeout(TEARDOWN_BOUND)
                .onErrorResume(error -> {
                    log.warn("a child's teardown did not report within {} ({}); its place is given back", TEARDOWN_BOUND, error.toString());
                    return Mono.empty();
                })
                .then(place.release())
                .doFinally(signal -> freed.run());
    }
}
