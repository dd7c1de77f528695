package dev.tether.replicas;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.tether.daemon.Periodic;
import dev.tether.docker.InstanceId;
import dev.tether.store.InstanceLeases;
import dev.tether.store.InstanceLeases.Lease;
import dev.tether.store.StoreSharing;

/**
 * Keeps this replica's lease alive every {@code tether.replicas.heartbeat}, marks it draining when a graceful stop
 * begins ({@link GracefulDrain}; renewals go on, so no peer reaps what this replica is still tearing down), and gives
 * it back at the end of the stop so that peers do not wait for it to run out. A renewal that finds the row gone means a peer took this replica for dead
 * (a pause longer than the lease) and removed its containers: the sessions that used them fail and start again.
 */
@Component
public final class ReplicaLease implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(ReplicaLease.class);

    private final InstanceLeases leases;
    private final String instance;
    private final ReplicaProperties properties;
    private final Supplier<String> address;
    private final boolean shared;
    private final Scheduler clock;
    private final Instant startedAt;
    private final AtomicBoolean held = new AtomicBoolean();
    private volatile boolean draining;
    /** Until when the last renewal that reached the store keeps the lease; {@link Instant#MIN} before it and after the stop. */
    private final AtomicReference<Instant> heldUntil = new AtomicReference<>(Instant.MIN);
    private final Periodic heartbeat = new Periodic();

    @Autowired
    ReplicaLease(InstanceLeases leases, InstanceId instance, ReplicaProperties properties, StoreSharing sharing,
            Environment environment) {
        this(leases, instance.value(), properties, () -> AdvertisedAddress.of(properties.address(), environment),
                sharing.isShared(), Schedulers.parallel());
    }

    ReplicaLease(InstanceLeases leases, String instance, ReplicaProperties properties, boolean shared, Scheduler clock) {
        this(leases, instance, properties, properties::address, shared, clock);
    }

    ReplicaLease(InstanceLeases leases, String instance, ReplicaProperties properties, Supplier<String> address, boolean shared,
            Scheduler clock) {
        this.leases = leases;
        this.instance = instance;
        this.properties = properties;
        this.address = address;
        this.shared = shared;
        this.clock = clock;
        this.startedAt = now(clock);
    }

    /** Renews the lease once: until now plus {@code lease-ttl}. */
    Mono<Boolean> renew() {
        return Mono.defer(() -> {
                    Lease lease = new Lease(instance, address.get(), startedAt, now(clock).plus(properties.leaseTtl()), draining);
                    // Bounded in real time: a renewal stuck on a connection the network lost (no answer, no reset)
                    // must not hold up the next heartbeat's, which then opens another.
                    return leases.renew(lease).timeout(properties.heartbeat()).doOnNext(kept -> heldUntil.set(lease.expiresAt()));
                })
                .doOnNext(kept -> {
                    if (!kept && held.getAndSet(true)) {
                        log.warn("replica {} found its lease taken: a peer took it for dead after {} of silence and removed "
                                + "its containers; sessions that used them start again", instance, properties.leaseTtl());
                    }
                    else if (!kept) {
                        log.info("replica {} holds its lease, renewed every {}", instance, properties.heartbeat());
                    }
                });
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
        return !shared || !draining && now(clock).isBefore(heldUntil.get());
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
