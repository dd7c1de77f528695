package dev.tether.replicas;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.tether.daemon.Periodic;
import dev.tether.docker.InstanceId;
import dev.tether.store.ConnectionKey;
import dev.tether.store.StoreSharing;
import dev.tether.store.leases.InstanceLeases.Lease;
import dev.tether.store.leases.InstanceLeases;

/**
 * Which replica owns a connection's warm session: of the replicas alive, the one that scores highest for that
 * connection (rendezvous hashing), so every replica that sees the same leases picks the same owner, and a replica that
 * leaves moves only its own connections. A replica is alive until it gives its lease back or a peer takes it for dead,
 * which a peer does only once its lease has run out and it does not answer at its address: one that answers is slow,
 * not dead, and keeps its connections. The leases are read every {@code tether.replicas.heartbeat} (and at once when
 * a peer has just been taken for dead) and kept in memory: asking costs no row. On an embedded store, or before any lease is read, every connection is
 * this replica's own. A replica that is stopping marks its lease draining ({@link GracefulDrain}): from then on it is
 * nobody's owner, though it stays a live peer (it still holds its paused executions and agent sessions), and a
 * forward it refuses, or that cannot connect to it, reads the leases again ({@link #remoteOwnerAfresh}) and goes to
 * the connection's new owner.
 */
@Component
public final class ConnectionOwners implements SmartLifecycle {

    /** Where a peer owner answers: its instance id and the {@code host:port} of its lease. */
    public record Peer(String instance, String address) {
    }

    private static final Logger log = LoggerFactory.getLogger(ConnectionOwners.class);

    private final InstanceLeases leases;
    private final String instance;
    private final ReplicaProperties properties;
    private final boolean shared;
    private final Scheduler clock;
    private final Periodic refresh = new Periodic();
    /** What the last read found; written whole, so that a reader never sees one list of one read and one of another. */
    private volatile View view = View.NONE;
    private volatile boolean leaving;
    private final Consumer<OwnersRead> announce;

    /** The live peers, and of those the ones that may own connections (not draining). */
    private record View(List<Peer> live, List<Peer> owners) {
        static final View NONE = new View(List.of(), List.of());
    }

    @Autowired
    ConnectionOwners(InstanceLeases leases, InstanceId instance, ReplicaProperties properties, StoreSharing sharing,
            MeterRegistry registry, ApplicationEventPublisher events) {
        this(leases, instance.value(), properties, sharing.isShared(), Schedulers.parallel(), events::publishEvent);
        Gauge.builder("tether.replicas.live", this, owners -> owners.view.live().size())
                .description("replicas with a live lease, as this replica last read them (0 on an embedded store)")
                .register(registry);
    }

    ConnectionOwners(InstanceLeases leases, String instance, ReplicaProperties properties, boolean shared, Scheduler clock) {
        this(leases, instance, properties, shared, clock, changed -> { });
    }

    ConnectionOwners(InstanceLeases leases, String instance, ReplicaProperties properties, boolean shared, Scheduler clock,
            Consumer<OwnersRead> announce) {
        this.announce = announce;
        this.leases = leases;
        this.instance = instance;
        this.properties = properties;
        this.shared = shared;
        this.clock = clock;
    }

    /** Whether ownership can ever be another replica's: false on an embedded store, where nothing is forwarded. */
    public boolean shared() {
        return shared;
    }

    /** This replica's instance id, which a forwarded request carries so that its receiver serves it. */
    public String instance() {
        return instance;
    }

    /**
     * The peer that owns {@code connection}; empty when this replica owns it (or knows of no peer). A draining replica
     * owns nothing while another may: its own requests go to the owners that remain.
     */
    public Optional<Peer> remoteOwner(ConnectionKey connection) {
        List<Peer> peers = leaving ? view.owners().stream().filter(peer -> !peer.instance().equals(instance)).toList()
                : view.owners();
        if (peers.isEmpty() || !leaving && peers.size() < 2) {
            return Optional.empty();
        }
        String key = connection.toString();
        Peer owner = peers.stream().max(Comparator.comparingLong((Peer peer) -> score(key, peer.instance()))
                .thenComparing(Peer::instance)).orElseThrow();
        return owner.instance().equals(instance) ? Optional.empty() : Optional.of(owner);
    }

    /**
     * {@link #remoteOwner} after reading the live leases again: for a forward that its owner provably did not take
     * (it refused to connect, or said it is draining), whose answer is then the owner that takes over. Not
     * coalesced with a read already under way, which may have begun before the owner marked its lease. When the
     * leases cannot be read, the last read answers.
     */
    public Mono<Optional<Peer>> remoteOwnerAfresh(ConnectionKey connection) {
        return refresh()
                .onErrorResume(error -> {
                    log.warn("cannot read the live replicas again for {}, keeping the last read: {}", connection, error.toString());
                    return Mono.empty();
                })
                .then(Mono.fromSupplier(() -> remoteOwner(connection)));
    }

    /** The live peer {@code instance}, where what it holds in memory can be reached; empty for this replica and the dead. */
    public Optional<Peer> peer(String instance) {
        return this.instance.equals(instance) ? Optional.empty()
                : view.live().stream().filter(peer -> peer.instance().equals(instance)).findFirst();
    }

    /** Whether this replica is stopping: it owns no connection, and refuses what peers still forward to it as owner. */
    public boolean leaving() {
        return leaving;
    }

    /** From now on this replica owns no connection while another replica may; called once its lease says so. */
    void leave() {
        leaving = true;
        announce.accept(new OwnersRead(instance));
    }

    /** The owner among {@code instances} by rendezvous hashing, as {@link #remoteOwner} picks it. */
    static String owner(String connection, Collection<String> instances) {
        return instances.stream().max(Comparator.comparingLong((String id) -> score(connection, id))
                .thenComparing(Comparator.naturalOrder())).orElseThrow();
    }

    /**
     * Reads the leases once: every replica no peer has taken for dead ({@link InstanceLeases#standing}) is alive, one
     * whose lease ran out included until a peer confirms it dead ({@link DeadReplicaReaper}); a lease without a port
     * (written before the server bound one) is not yet a peer.
     */
    Mono<Integer> refresh() {
        return Flux.defer(leases::standing)
                .filter(lease -> AdvertisedAddress.hasPort(lease.address()))
                .collectSortedList(Comparator.comparing(Lease::instance))
                .map(read -> {
                    View now = new View(read.stream().map(ConnectionOwners::peer).toList(),
                            read.stream().filter(lease -> !lease.draining()).map(ConnectionOwners::peer).toList());
                    boolean changed = !now.equals(view);
                    view = now;
                    if (changed) {
                        log.info("replicas alive: {}", read.stream()
                                .map(lease -> lease.instance() + "@" + lease.address() + (lease.draining() ? " (draining)" : "")).toList());
                    }
                    announce.accept(new OwnersRead(instance));
                    return now.live().size();
                });
    }

    private static Peer peer(Lease lease) {
        return new Peer(lease.instance(), lease.address());
    }

    /**
     * FNV-1a over connection and instance, then a 64-bit finaliser (SplitMix64's), so that instance ids that differ in
     * one character still spread connections evenly. Stable across JVMs and versions: every replica must agree.
     */
    static long score(String connection, String instance) {
        long hash = 0xcbf29ce484222325L;
        for (byte b : (connection + "\n" + instance).getBytes(StandardCharsets.UTF_8)) {
            hash ^= b & 0xff;
            hash *= 0x100000001b3L;
        }
        hash = (hash ^ (hash >>> 30)) * 0xbf58476d1ce4e5b9L;
        hash = (hash ^ (hash >>> 27)) * 0x94d049bb133111ebL;
        return hash ^ (hash >>> 31);
    }

    @Override
    public void start() {
        if (!shared) {
            return;
        }
        // At once: until its first read a replica takes every connection for its own, and may start a second child.
        refresh.start(Duration.ZERO, properties.heartbeat(), clock, this::refresh,
                error -> log.warn("cannot read the live replicas yet, keeping {}: {}", view.live().size(), error.toString()));
    }

    @Override
    public void stop() {
        refresh.stop();
    }

    @Override
    public boolean isRunning() {
        return refresh.isRunning();
    }
}
