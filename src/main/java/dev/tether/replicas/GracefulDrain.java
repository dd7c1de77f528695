package dev.tether.replicas;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.tether.store.StoreSharing;

/**
 * The first step of a replica's graceful stop (SIGTERM), before the web server's own graceful shutdown: marks the
 * lease draining (readiness goes down at once, and peers stop choosing this replica as an owner), stops owning
 * connections here too (what still reaches this replica for a connection goes to its new owner, and what peers still
 * forward here as to the owner is refused, so that they read the leases again and go there), then keeps listening for
 * {@code tether.replicas.drain-delay} so that a load balancer's health checks see the replica leave before connections
 * are refused. The stop goes on as before: the web server finishes the requests in flight (bounded by
 * {@code spring.lifecycle.timeout-per-shutdown-phase}), the children are torn down, and the lease is removed last,
 * so that no peer takes this replica's containers for a dead one's while it is still tearing them down.
 */
@Component
public final class GracefulDrain implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(GracefulDrain.class);

    private final ReplicaLease lease;
    private final ConnectionOwners owners;
    private final Duration delay;
    private final boolean shared;
    private final Scheduler clock;
    private volatile boolean running;

    @Autowired
    GracefulDrain(ReplicaLease lease, ConnectionOwners owners, ReplicaProperties properties, StoreSharing sharing) {
        this(lease, owners, properties.drainDelay(), sharing.isShared(), Schedulers.parallel());
    }

    GracefulDrain(ReplicaLease lease, ConnectionOwners owners, Duration delay, boolean shared, Scheduler clock) {
        this.lease = lease;
        this.owners = owners;
        this.delay = delay;
        this.shared = shared;
        this.clock = clock;
    }

    /**
     * Drains: completes once the lease is marked and the delay has passed. Ownership leaves this replica only after
     * the store has the mark, so that a peer this replica then refuses finds the new owner when it reads the leases.
     */
    Mono<Void> drain() {
        if (!shared) {
            return Mono.empty();
        }
        return lease.drain()
                .then(Mono.fromRunnable(owners::leave))
                .then(Mono.delay(delay, clock))
                .doOnSubscribe(started -> log.info("stopping: handing connections to the other replicas, listening {} more", delay))
                .then();
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop(Runnable callback) {
        running = false;
        drain().doFinally(signal -> callback.run())
                .subscribe(null, error -> log.warn("draining did not finish: {}", error.toString()));
    }

    @Override
    public void stop() {
        stop(() -> { });
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Stops first of all, before the web server's graceful shutdown (phase {@code Integer.MAX_VALUE - 1024}). */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE;
    }
}
