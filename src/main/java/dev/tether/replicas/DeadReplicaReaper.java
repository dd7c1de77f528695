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
 * each dead replica is reaped by one peer at a time however many look at the same moment; the row goes only once its
 * containers are gone. A removal that fails (the engine slow or out of reach) gives the claim back and is tried again
 * at the next heartbeat, and a claim lasts {@code lease-ttl}, so that a claimer that dies in the middle is followed by
 * another peer rather than leaving the containers for good.
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

    /** Reaps every replica whose lease has run out by now; emits how many containers were removed. */
    Mono<Long> reapOnce() {
        return Mono.defer(() -> {
            Instant now = Instant.ofEpochMilli(clock.now(TimeUnit.MILLISECONDS));
            return leases.expired(now)
                    .filter(lease -> !lease.instance().equals(instance))
                    .concatMap(lease -> leases.claim(lease, instance, now, now.plus(properties.leaseTtl()))
                            .filter(Boolean::booleanValue)
                            .flatMap(won -> reap(lease)))
                    .reduce(0L, Long::sum);
        });
    }

    private Mono<Long> reap(InstanceLeases.Lease lease) {
        log.warn("replica {} at {} stopped renewing its lease at {}: removing what it left", lease.instance(), lease.address(),
                lease.expiresAt());
        // Bounded by the claim's own length, so that this replica gives up before a peer may take the claim over.
        return containers.reapReplica(lease.instance(), lease.expiresAt())
                .timeout(properties.leaseTtl(), clock)
                .flatMap(removed -> leases.reaped(lease.instance(), instance).thenReturn(removed))
                .onErrorResume(error -> {
                    log.warn("cannot remove what replica {} left yet, trying again at the next heartbeat: {}", lease.instance(),
                            error.toString());
                    return leases.unclaim(lease.instance(), instance).thenReturn(0L);
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
