package dev.tether.session;

import java.util.concurrent.TimeUnit;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.pool.InstrumentedPool;
import reactor.pool.PoolAcquirePendingLimitException;
import reactor.pool.PoolAcquireTimeoutException;
import reactor.pool.PoolBuilder;
import reactor.pool.PooledRef;

import dev.tether.store.ConnectionKey;

/**
 * The line for a lease of one session at {@code max-leases-per-session}: reactor-pool's pending acquires, first come
 * first served, each bounded by {@code lease-wait} on the pool's timer (none is scheduled for a place granted at once),
 * and at most {@code max-lease-waiters} long. A place says nothing of the session: {@link PooledSession} decides
 * whether it counts as a lease.
 */
final class LeaseLine {

    private final ConnectionKey key;
    private final SessionProperties properties;
    private final InstrumentedPool<Object> places;

    LeaseLine(ConnectionKey key, SessionProperties properties, Scheduler timer) {
        this.key = key;
        this.properties = properties;
        this.places = PoolBuilder.from(Mono.fromSupplier(Object::new))
                .sizeBetween(0, properties.maxLeasesPerSession())
                .maxPendingAcquire(properties.leaseWait().isZero() ? 0 : properties.maxLeaseWaiters())
                .pendingAcquireTimer((task, delay) -> timer.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS))
                .buildPool();
    }

    /** A place in line; released, it goes to the longest waiter. Refused with {@link SessionLimitException}. */
    Mono<PooledRef<Object>> place() {
        return places.acquire(properties.leaseWait())
                .onErrorMap(PoolAcquireTimeoutException.class, late -> refusal("none came free within "
                        + properties.leaseWait() + " (tether.session.lease-wait)"))
                .onErrorMap(PoolAcquirePendingLimitException.class, full -> refusal(properties.leaseWait().isZero()
                        ? "may not wait (tether.session.lease-wait is 0)"
                        : properties.maxLeaseWaiters() + " more are already waiting (tether.session.max-lease-waiters)"));
    }

    /** Askers waiting for a place now. */
    int waiting() {
        return places.metrics().pendingAcquireSize();
    }

    private SessionLimitException refusal(String why) {
        return new SessionLimitException("tether.session.max-leases-per-session", "connection " + key + " already has "
                + properties.maxLeasesPerSession() + " requests in flight (tether.session.max-leases-per-session) and "
                + why);
    }
}
