package dev.tether.replicas;

import java.time.Instant;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.tether.daemon.Periodic;
import dev.tether.docker.ContainerReaper;
import dev.tether.docker.InstanceId;
import dev.tether.store.InstanceLeases;
import dev.tether.store.StoreSharing;

/**
 * Every {@code tether.replicas.heartbeat}, claims the leases that ran out and removes the containers their replicas
 * left on the Docker engine. The claim is an update of the lease row that only one replica's statement can win, so
 * each dead replica is reaped by one peer at a time however many look at the same moment. A removal that fails (the
 * engine slow or out of reach) gives the claim back and is tried again at the next heartbeat, and a claim lasts
 * {@code lease-ttl}, so that a claimer that dies in the middle is followed by another peer rather than leaving the
 * containers for good. Once reaped, the row stays as a tombstone for {@code tether.replicas.tombstone}, and every live
 * peer goes on removing containers labelled with the dead replica's id at each heartbeat: a {@code docker run} client
 * it left may have its container created after the first removal, when a slow engine gets to it. A replica that comes
 * back under the same id writes its lease anew, which ends the tombstone; what it runs then is its own.
 */
@Component
public final class DeadReplicaReaper implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(DeadReplicaReaper.class);

    private final InstanceLeases leases;
    private final ContainerReaper containers;
    private final String instance;
    private final ReplicaProperties properties;
    private final boolean shared;
    private final Scheduler clock;
    private final Periodic schedule = new Periodic();

    @Autowired
    DeadReplicaReaper(InstanceLeases leases, ContainerReaper containers, InstanceId instance, ReplicaProperties properties,
            StoreSharing sharing) {
        this(leases, containers, instance.value(), properties, sharing.isShared(), Schedulers.parallel());
    }

    DeadReplicaReaper(InstanceLeases leases, ContainerReaper containers, String instance, ReplicaProperties properties,
            boolean shared, Scheduler clock) {
        this.leases = leases;
        this.containers = containers;
        this.instance = instance;
        this.properties = properties;
        this.shared = shared;
        this.clock = clock;
    }

    /**
     * Reaps every replica whose lease has run out by now, and removes what reaped ones created since (until their
     * tombstones end, then buried); emits how many containers were removed.
     */
    Mono<Long> reapOnce() {
        return Mono.defer(() -> {
            Instant now = Instant.ofEpochMilli(clock.now(TimeUnit.MILLISECONDS));
            Mono<Long> expired = leases.expired(now)
                    .filter(lease -> !lease.instance().equals(instance))
                    .concatMap(lease -> leases.claim(lease, instance, now, now.plus(properties.leaseTtl()))
                            .filter(Boolean::booleanValue)
                            .flatMap(won -> reap(lease, now)))
                    .reduce(0L, Long::sum);
            Mono<Long> late = leases.tombstones()
                    .filter(tombstone -> !tombstone.instance().equals(instance))
                    .concatMap(tombstone -> tombstone.until().isBefore(now) ? leases.bury(tombstone.instance(), now).thenReturn(0L)
                            : sweep(tombstone))
                    .reduce(0L, Long::sum);
            return expired.flatMap(reaped -> late.map(swept -> reaped + swept));
        });
    }

    private Mono<Long> reap(InstanceLeases.Lease lease, Instant now) {
        Instant until = now.plus(properties.tombstone());
        log.warn("replica {} at {} stopped renewing its lease at {}: removing what it left, and what it may still create until {}",
                lease.instance(), lease.address(), lease.expiresAt(), until);
        // Bounded by the claim's own length, so that this replica gives up before a peer may take the claim over.
        return containers.reapReplica(lease.instance(), leases.takenForDead(lease.instance()))
                .timeout(properties.leaseTtl(), clock)
                .flatMap(removed -> leases.reaped(lease.instance(), instance, until).thenReturn(removed))
                .onErrorResume(error -> {
                    log.warn("cannot remove what replica {} left yet, trying again at the next heartbeat: {}", lease.instance(),
                            error.toString());
                    return leases.unclaim(lease.instance(), instance).thenReturn(0L);
                });
    }

    /** One more look for what a reaped replica's late {@code docker run} clients created; any peer may, removal is idempotent. */
    private Mono<Long> sweep(InstanceLeases.Tombstone tombstone) {
        return containers.reapReplica(tombstone.instance(), leases.takenForDead(tombstone.instance()))
                .timeout(properties.leaseTtl(), clock)
                .doOnNext(removed -> {
                    if (removed > 0) {
                        log.warn("removed {} container(s) that replica {} had created after it was reaped", removed,
                                tombstone.instance());
                    }
                })
                .onErrorResume(error -> {
                    log.warn("cannot look for late containers of replica {} yet: {}", tombstone.instance(), error.toString());
                    return Mono.just(0L);
                });
    }

    @Override
    public void start() {
        if (!shared) {
            return;
        }
        schedule.start(properties.heartbeat(), properties.heartbeat(), clock, this::reapOnce,
                error -> log.warn("cannot reap dead replicas yet: {}", error.toString()));
    }

    @Override
    public void stop() {
        schedule.stop();
    }

    @Override
    public boolean isRunning() {
        return schedule.isRunning();
    }
}
