package dev.tether.replicas;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.tether.daemon.Periodic;
import dev.tether.docker.ContainerReaper;
import dev.tether.docker.InstanceId;
import dev.tether.store.StoreSharing;
import dev.tether.store.leases.InstanceLeases;

/**
 * Every {@code tether.replicas.heartbeat}, takes the replicas whose leases ran out for dead, once confirmed, and removes
 * the containers they left on the Docker engine. A lease that ran out is a death only when its replica does not answer
 * at the address its lease names within {@code tether.replicas.probe-timeout} ({@link PeerProbe}): one that answers is
 * slow (starved of CPU, its renewals late), not dead, and is left be, containers and connections. A confirmed death is
 * a claim of the lease row, the one decision every replica follows: its connections move ({@link ConnectionOwners}
 * reads the leases again at once), and a renewal of the claimed row fails, so the replica, should it come back, knows
 * it was taken for dead. The claim is an update of the lease row that only one replica's statement can win, so
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
    private final PeerProbe probe;
    private final Runnable decided;
    private final String instance;
    private final ReplicaProperties properties;
    private final boolean shared;
    private final Scheduler clock;
    private final Periodic schedule = new Periodic();
    private final Counter answered;
    private final Counter silent;
    /** Per replica, the end of the lease it was last found slow with, so that it is said once per lease, not per heartbeat. */
    private final Map<String, Instant> toldSlow = new ConcurrentHashMap<>();

    @Autowired
    DeadReplicaReaper(InstanceLeases leases, ContainerReaper containers, PeerProbe probe, ConnectionOwners owners,
            InstanceId instance, ReplicaProperties properties, StoreSharing sharing, MeterRegistry registry) {
        this(leases, containers, probe, () -> owners.refresh().subscribe(null,
                        error -> log.warn("cannot read the live replicas again: {}", error.toString())),
                instance.value(), properties, sharing.isShared(), Schedulers.parallel(), registry);
    }

    /** A reaper whose peers never answer: every lease that ran out is a death. */
    DeadReplicaReaper(InstanceLeases leases, ContainerReaper containers, String instance, ReplicaProperties properties,
            boolean shared, Scheduler clock) {
        this(leases, containers, lease -> Mono.just(false), () -> { }, instance, properties, shared, clock, new SimpleMeterRegistry());
    }

    /** {@code decided}: told once a replica has been taken for dead, so that its connections move at once. */
    DeadReplicaReaper(InstanceLeases leases, ContainerReaper containers, PeerProbe probe, Runnable decided, String instance,
            ReplicaProperties properties, boolean shared, Scheduler clock, MeterRegistry registry) {
        this.leases = leases;
        this.containers = containers;
        this.probe = probe;
        this.decided = decided;
        this.instance = instance;
        this.properties = properties;
        this.shared = shared;
        this.clock = clock;
        this.answered = probes(registry, "answered");
        this.silent = probes(registry, "silent");
    }

    private static Counter probes(MeterRegistry registry, String outcome) {
        return Counter.builder("tether.replicas.probes").tag("outcome", outcome)
                .description("replicas whose lease ran out asked at their address whether they are still there: answered "
                        + "(slow, left be) or silent (taken for dead)")
                .register(registry);
    }

    /**
     * Reaps every replica whose lease has run out by now, and removes what reaped ones created since (until their
     * tombstones end, then buried); emits how many containers were removed.
     */
    Mono<Long> reapOnce() {
        return Mono.defer(() -> {
            Instant now = Instant.ofEpochMilli(clock.now(TimeUnit.MILLISECONDS));
            // Read whole first: a probe takes up to probe-timeout, and the query's connection is not held meanwhile.
            Mono<Long> expired = leases.expired(now).collectList().flatMapMany(Flux::fromIterable)
                    .filter(lease -> !lease.instance().equals(instance))
                    .concatMap(lease -> dead(lease)
                            .filter(Boolean::booleanValue)
                            .flatMap(dead -> leases.claim(lease, instance, now, now.plus(properties.leaseTtl())))
                            .filter(Boolean::booleanValue)
                            .flatMap(won -> {
                                if (!lease.claimed()) {
                                    decided.run();
                                }
                                return reap(lease, now);
                            }))
                    .reduce(0L, Long::sum);
            Mono<Long> late = leases.tombstones().collectList().flatMapMany(Flux::fromIterable)
                    .filter(tombstone -> !tombstone.instance().equals(instance))
                    .concatMap(tombstone -> tombstone.until().isBefore(now) ? leases.bury(tombstone.instance(), now).thenReturn(0L)
                            : sweep(tombstone))
                    .reduce(0L, Long::sum);
            return expired.flatMap(reaped -> late.map(swept -> reaped + swept));
        });
    }

    /**
     * Whether the replica of a lease that ran out is dead: taken for dead already (a claim whose cleanup is to be tried
     * again), or silent at its address for {@code probe-timeout}. One that answers is slow, not dead.
     */
    private Mono<Boolean> dead(InstanceLeases.Lease lease) {
        if (lease.claimed()) {
            return Mono.just(true);
        }
        return Mono.defer(() -> probe.answers(lease))
                .timeout(properties.probeTimeout(), clock)
                .onErrorResume(error -> Mono.just(false))
                .defaultIfEmpty(false)
                .map(answers -> {
                    (answers ? answered : silent).increment();
                    if (answers && !lease.expiresAt().equals(toldSlow.put(lease.instance(), lease.expiresAt()))) {
                        log.warn("replica {}'s lease ran out at {}, but it answers at {}: slow, not dead; its containers and "
                                + "connections stay its own", lease.instance(), lease.expiresAt(), lease.address());
                    }
                    return !answers;
                });
    }

    private Mono<Long> reap(InstanceLeases.Lease lease, Instant now) {
        Instant until = now.plus(properties.tombstone());
        log.warn("replica {} at {} stopped renewing its lease at {} and does not answer: taken for dead, removing what it left, "
                + "and what it may still create until {}", lease.instance(), lease.address(), lease.expiresAt(), until);
        toldSlow.remove(lease.instance());
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
