package dev.tether.replicas;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.tether.docker.ConnectionContainers;
import dev.tether.docker.ConnectionContainers.Found;
import dev.tether.docker.InstanceId;
import dev.tether.store.ConnectionKey;
import dev.tether.store.StoreSharing;
import dev.tether.store.leases.InstanceLeases;

/**
 * One child per connection across replicas on one Docker engine, at every moment: before a replica starts a
 * connection's child, no other container of that connection may run or be about to. Every replica names a
 * connection's container alike ({@link #key}: the store's identity and the connection, hashed), so the engine itself
 * refuses a second one; and before a start, {@link #clear} removes what a replica that is gone left of the connection
 * (dead, reaped, or this replica's own leftover), and waits for a live peer's container to go (the peer is handing the
 * connection over: draining, or it learns at its next read of the leases that it no longer owns it), which that peer
 * ends itself once its requests in flight are answered.
 */
@Component
public final class ConnectionFence {

    private static final Logger log = LoggerFactory.getLogger(ConnectionFence.class);
    private static final Duration LOOK_AGAIN = Duration.ofMillis(250);

    private final InstanceLeases leases;
    private final ConnectionContainers containers;
    private final String instance;
    private final ReplicaProperties properties;
    private final boolean shared;
    private final Scheduler clock;
    private final Mono<String> identity;
    private final AtomicInteger waiting = new AtomicInteger();

    @Autowired
    ConnectionFence(InstanceLeases leases, ConnectionContainers containers, InstanceId instance, ReplicaProperties properties,
            StoreSharing sharing, MeterRegistry registry) {
        this(leases, containers, instance.value(), properties, sharing.isShared(), Schedulers.parallel(), registry);
    }

    ConnectionFence(InstanceLeases leases, ConnectionContainers containers, String instance, ReplicaProperties properties,
            boolean shared, Scheduler clock, MeterRegistry registry) {
        Gauge.builder("tether.replicas.handover.waiting", waiting, AtomicInteger::get)
                .description("child starts waiting for a live peer's container of their connection to go").register(registry);
        this.leases = leases;
        this.containers = containers;
        this.instance = instance;
        this.properties = properties;
        this.shared = shared;
        this.clock = clock;
        // Read once it is first needed and kept: it never changes. A failed read is not kept.
        this.identity = Mono.defer(leases::storeIdentity).cache(read -> Duration.ofMillis(Long.MAX_VALUE),
                failed -> Duration.ZERO, () -> Duration.ZERO);
    }

    /** Whether other replicas may run a connection's child: false on an embedded store, where nothing is fenced. */
    public boolean shared() {
        return shared;
    }

    /**
     * The key that fences {@code connection}'s child (its container's name and {@code tether.connection} label): the same
     * on every replica of this store, another for the same connection of another store on the same engine.
     */
    public Mono<String> key(ConnectionKey connection) {
        return identity.map(store -> hash(store + "\n" + connection));
    }

    /**
     * Completes once no container fenced by {@code fence} is on the engine but this replica's live children's: one of a
     * replica that is gone (taken for dead by a peer, reaped, or stopped) or a leftover of this replica's own is removed at once;
     * one of a live peer is waited for, looked at every 250 ms, for at most {@code handover-wait}. Emits whether it
     * found any. Whether a peer is live is read from the store afresh, not taken from the last heartbeat's read: a peer
     * that started a moment ago must not lose its new container to a replica that has not seen its lease yet.
     */
    public Mono<Boolean> clear(ConnectionKey connection, String fence) {
        return Mono.defer(() -> {
            AtomicBoolean found = new AtomicBoolean();
            AtomicReference<List<Found>> holders = new AtomicReference<>(List.of());
            AtomicBoolean counted = new AtomicBoolean();
            return Mono.defer(() -> look(connection, fence, found, holders))
                    .doOnNext(clear -> {
                        if (!clear && counted.compareAndSet(false, true)) {
                            waiting.incrementAndGet();
                        }
                    })
                    .filter(Boolean::booleanValue)
                    .repeatWhenEmpty(attempts -> attempts.concatMap(attempt -> Mono.delay(LOOK_AGAIN, clock)))
                    .timeout(properties.handoverWait(), clock)
                    .onErrorMap(TimeoutException.class,
                            late -> new ConnectionHandoverException(connection, Objects.requireNonNull(holders.get()),
                                    properties.handoverWait()))
                    .map(clear -> found.get())
                    .doFinally(signal -> {
                        if (counted.get()) {
                            waiting.decrementAndGet();
                        }
                    });
        });
    }

    /** One look: removes what the gone left; true when nothing else is in the way, false while a live one's container is. */
    private Mono<Boolean> look(ConnectionKey connection, String fence, AtomicBoolean found, AtomicReference<List<Found>> holders) {
        return containers.of(fence).collectList().flatMap(all -> {
            if (all.isEmpty()) {
                return Mono.just(true);
            }
            found.set(true);
            return liveInstances().flatMap(live -> {
                List<Found> waitFor = all.stream().filter(container -> mustWaitFor(container, live)).toList();
                if (!waitFor.equals(holders.getAndSet(waitFor)) && !waitFor.isEmpty()) {
                    log.info("connection {} still has a container of a live replica, waiting for it to go before starting one"
                            + " here: {}", connection, waitFor);
                }
                return Flux.fromIterable(all)
                        .filter(container -> !waitFor.contains(container))
                        .concatMap(container -> containers.remove(container).doOnNext(removed -> log.warn(
                                "removed container {} of connection {} before starting its child here: its replica {}", container,
                                connection, container.instance().equals(instance) ? "is this one, and no live child owns it"
                                        : "is gone (taken for dead, or stopped)")))
                        .then(Mono.fromSupplier(waitFor::isEmpty));
            });
        });
    }

    /**
     * A container that is this replica's own live child's, that the engine is removing already, or that a live peer
     * has not ended yet is waited for; anything else is removed: it is a dead or stopped replica's, or a leftover.
     */
    private boolean mustWaitFor(Found container, Set<String> live) {
        return container.ownedHere() || "removing".equals(container.state())
                || !container.ended() && !container.instance().equals(instance) && live.contains(container.instance());
    }

    /** The replicas no peer has taken for dead: a silent one is waited for until a peer confirms it dead. */
    private Mono<Set<String>> liveInstances() {
        return Flux.defer(leases::standing)
                .map(InstanceLeases.Lease::instance)
                .collect(Collectors.toSet());
    }

    private static String hash(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 12);
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("every JVM has SHA-256", ex);
        }
    }
}
