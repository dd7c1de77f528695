package dev.tether.replicas;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

import dev.tether.daemon.Periodic;
import dev.tether.docker.InstanceId;
import dev.tether.store.StoreSharing;
import dev.tether.store.leases.InstanceLeases.Lease;
import dev.tether.store.leases.InstanceLeases;

/**
 * Keeps this replica's lease alive every {@code tether.replicas.heartbeat}, marks it draining when a graceful stop
 * begins ({@link GracefulDrain}; renewals go on, so no peer reaps what this replica is still tearing down), and gives
 * it back at the end of the stop so that peers do not wait for it to run out.
 *
 * <p>A renewal that finds the lease taken (a peer took this replica for dead: a freeze or a stall longer than the lease,
 * during which it did not answer at its address) tears every child of this replica's connections down
 * ({@link LocalChildren}) before it writes the lease anew: the peers have removed its containers and started their own
 * children of its connections, and whatever this replica still runs of them (a child on an engine they cannot see, a
 * docker run client about to create its container) must be gone before it takes any connection back. Until then it
 * serves nothing: {@link #serving()} is what every request ({@code replicas.forwarding.LeaseGate}) and every child's start
 * ({@link ConnectionFence}) waits for. A lease that merely ran out (renewals late, nobody took it) is extended as usual:
 * peers act only on a claim, which a late renewal forestalls.
 */
@Component
public final class ReplicaLease implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(ReplicaLease.class);

    private final InstanceLeases leases;
    private final String instance;
    private final ReplicaProperties properties;
    private final Supplier<String> address;
    private final Supplier<LocalChildren> children;
    private final boolean shared;
    private final Scheduler clock;
    private final Instant startedAt;
    private final AtomicBoolean held = new AtomicBoolean();
    private volatile boolean draining;
    private volatile boolean recovering;
    private volatile boolean stopped;
    /** Until when the last renewal that reached the store keeps the lease; {@link Instant#MIN} before it and after the stop. */
    private final AtomicReference<Instant> heldUntil = new AtomicReference<>(Instant.MIN);
    /** The renewal under way, which the heartbeat, a request and a child's start all join rather than start another. */
    private final AtomicReference<@Nullable Mono<Boolean>> renewing = new AtomicReference<>();
    private final Periodic heartbeat = new Periodic();

    @Autowired
    ReplicaLease(InstanceLeases leases, InstanceId instance, ReplicaProperties properties, StoreSharing sharing,
            Environment environment, ObjectProvider<LocalChildren> children) {
        this(leases, instance.value(), properties, () -> AdvertisedAddress.of(properties.address(), environment),
                children::getObject, sharing.isShared(), Schedulers.parallel());
    }

    /** A lease of a replica that runs no children. */
    ReplicaLease(InstanceLeases leases, String instance, ReplicaProperties properties, boolean shared, Scheduler clock) {
        this(leases, instance, properties, properties::address, () -> LocalChildren.NONE, shared, clock);
    }

    ReplicaLease(InstanceLeases leases, String instance, ReplicaProperties properties, Supplier<String> address,
            Supplier<LocalChildren> children, boolean shared, Scheduler clock) {
        this.leases = leases;
        this.instance = instance;
        this.properties = properties;
        this.address = address;
        this.children = children;
        this.shared = shared;
        this.clock = clock;
        this.startedAt = now(clock);
    }

    /**
     * Renews the lease once, until now plus {@code lease-ttl}: false when it had to be written anew (the first time, or
     * after it was taken, once this replica's children are gone). Joins a renewal under way.
     */
    Mono<Boolean> renew() {
        return Mono.defer(() -> {
            Mono<Boolean> running = renewing.get();
            if (running != null) {
                return running;
            }
            AtomicReference<@Nullable Mono<Boolean>> self = new AtomicReference<>();
            Mono<Boolean> fresh = Mono.defer(this::renewal).doFinally(signal -> renewing.compareAndSet(self.get(), null)).cache();
            self.set(fresh);
            return renewing.compareAndSet(null, fresh) ? fresh : renew();
        });
    }

    private Mono<Boolean> renewal() {
        Lease lease = lease();
        if (!held.get()) {
            return leases.renew(lease).timeout(properties.leaseTtl()).doOnNext(kept -> {
                heldUntil.set(lease.expiresAt());
                held.set(true);
                log.info("replica {} holds its lease, renewed every {}", instance, properties.heartbeat());
            });
        }
        // Bounded in real time by the lease's own length, past which it is lost anyway: a renewal stuck on a connection
        // the network lost (no answer, no reset) must not hold the next ones up, and the next opens another connection.
        // Not by a heartbeat: opening a connection on a loaded machine takes longer, and every try would start over.
        return leases.extend(lease).timeout(properties.leaseTtl())
                .flatMap(extended -> {
                    if (extended) {
                        heldUntil.set(lease.expiresAt());
                        return Mono.just(true);
                    }
                    return recover();
                });
    }

    /**
     * The lease was taken: nothing more is served or started until every child of this replica's connections is gone,
     * then the lease is written anew and this replica is a peer again (the same id: its connections come back to it).
     */
    private Mono<Boolean> recover() {
        return Mono.defer(() -> {
            recovering = true;
            log.warn("replica {} found its lease taken: a peer took it for dead (it did not answer for longer than {}) and "
                    + "took its connections over; tearing its children down before it serves again", instance, properties.leaseTtl());
            return children.get().endAll("replica " + instance + " was taken for dead by a peer")
                    .then(Mono.defer(() -> {
                        Lease lease = lease();
                        return leases.writeAnew(lease).timeout(properties.leaseTtl()).thenReturn(lease);
                    }))
                    .map(lease -> {
                        heldUntil.set(lease.expiresAt());
                        recovering = false;
                        log.info("replica {} is back: its children are gone and its lease written anew", instance);
                        return false;
                    });
        });
    }

    private Lease lease() {
        return new Lease(instance, address.get(), startedAt, now(clock).plus(properties.leaseTtl()), draining);
    }

    /**
     * Completes at once while this replica holds its lease (or shares no store); otherwise once a renewal has told
     * whether it still does: extended, or taken and recovered from (this replica's children gone, the lease written
     * anew), or, before the first renewal, written. Fails when no renewal succeeds within a lease's length: the store is
     * out of reach, and a peer may take this replica for dead at any moment.
     */
    public Mono<Void> serving() {
        return Mono.defer(() -> stopped ? Mono.error(new LeaseLostException(instance, Duration.ZERO))
                : holdsByTime() ? Mono.<Void>empty()
                : renew().then(Mono.defer(() -> holdsByTime() ? Mono.<Void>empty() : Mono.error(new IllegalStateException(
                        "the lease was not written"))))
                        .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, Duration.ofMillis(100)).scheduler(clock))
                        .timeout(properties.leaseTtl(), clock)
                        .onErrorMap(TimeoutException.class, late -> new LeaseLostException(instance, properties.leaseTtl())));
    }

    /** Whether the lease runs now, whatever this replica is doing with it (draining included); not while it recovers. */
    private boolean holdsByTime() {
        return !shared || !recovering && now(clock).isBefore(heldUntil.get());
    }

    /** Whether the lease ran out unrenewed, or was taken, after this replica had held it: requests then wait. */
    public boolean lapsed() {
        return shared && held.get() && !holdsByTime() && !Objects.requireNonNull(heldUntil.get()).equals(Instant.MIN);
    }

    @Override
    public void start() {
        if (!shared) {
            return;
        }
        heartbeat.start(Duration.ZERO, properties.heartbeat(), clock, this::renew,
                error -> log.warn("replica {} could not renew its lease: {}", instance, error.toString()));
    }

    /**
     * Whether this replica takes new work: always on a store that is not shared; on a shared one, from the first
     * renewal until the lease would run out unrenewed (the store unreachable) or is marked draining at the stop.
     * Readiness follows it, so that a load balancer sends no work to a replica whose children a peer may remove, or
     * that is leaving.
     */
    public boolean holds() {
        return !draining && holdsByTime();
    }

    /**
     * Marks the lease draining, in memory at once (readiness goes down) and then in the store, where peers reading
     * the leases stop choosing this replica as an owner; completes once the store has it, or after a heartbeat.
     */
    Mono<Void> drain() {
        return Mono.defer(() -> {
            draining = true;
            if (!shared) {
                return Mono.empty();
            }
            return leases.drain(instance)
                    .timeout(properties.heartbeat(), clock)
                    .doOnSuccess(done -> log.info("replica {} is draining: peers take over its connections", instance))
                    .onErrorResume(error -> {
                        log.warn("replica {} could not mark its lease draining; peers learn it from its refusals: {}", instance,
                                error.toString());
                        return Mono.empty();
                    });
        });
    }

    @Override
    public void stop(Runnable callback) {
        stopped = true;
        heldUntil.set(Instant.MIN);
        if (!heartbeat.isRunning()) {
            callback.run();
            return;
        }
        heartbeat.stop();
        leases.release(instance)
                .timeout(properties.heartbeat())
                .doFinally(signal -> callback.run())
                .subscribe(null, error -> log.warn("replica {} left its lease to run out: {}", instance, error.toString()));
    }

    @Override
    public void stop() {
        stop(() -> { });
    }

    @Override
    public boolean isRunning() {
        return heartbeat.isRunning();
    }

    /** Given back last, once the children (phase 0) are gone: until then a peer must not take them for a dead replica's. */
    @Override
    public int getPhase() {
        return -10;
    }

    private static Instant now(Scheduler clock) {
        return Instant.ofEpochMilli(clock.now(TimeUnit.MILLISECONDS));
    }
}
