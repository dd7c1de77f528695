package dev.tether.replicas;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.context.LifecycleProperties;
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
 * forward here as to the owner is refused, so that they read the leases again and go there), then keeps listening and
 * serving, every answer closing its connection ({@link DrainTraffic}), until {@code tether.replicas.drain-delay} has
 * passed without a request other than a health probe: only then has the load balancer taken it out of rotation, and
 * only then may it stop listening and close its idle connections without a request crossing the close. A balancer
 * whose checks never notice is outwaited for {@code spring.lifecycle.timeout-per-shutdown-phase} at most. The stop
 * goes on as before: the web server finishes the requests in flight (bounded by the same setting), the children are
 * torn down, and the lease is removed last, so that no peer takes this replica's containers for a dead one's while it
 * is still tearing them down.
 */
@Component
public final class GracefulDrain implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(GracefulDrain.class);

    private final ReplicaLease lease;
    private final ConnectionOwners owners;
    private final DrainTraffic traffic;
    private final Duration delay;
    private final Duration limit;
    private final boolean shared;
    private final Scheduler clock;
    private volatile boolean running;

    @Autowired
    GracefulDrain(ReplicaLease lease, ConnectionOwners owners, DrainTraffic traffic, ReplicaProperties properties,
            LifecycleProperties lifecycle, StoreSharing sharing) {
        this(lease, owners, traffic, properties.drainDelay(), lifecycle.getTimeoutPerShutdownPhase(), sharing.isShared(),
                Schedulers.parallel());
    }

    GracefulDrain(ReplicaLease lease, ConnectionOwners owners, DrainTraffic traffic, Duration delay, Duration limit,
            boolean shared, Scheduler clock) {
        this.lease = lease;
        this.owners = owners;
        this.traffic = traffic;
        this.delay = delay;
        this.limit = limit;
        this.shared = shared;
        this.clock = clock;
    }

    /**
     * Drains: completes once the lease is marked and the delay has passed without a request other than a probe arriving
     * or being answered (or the limit has passed). Ownership leaves this replica only after the store has the mark, so
     * that a peer this replica then refuses finds the new owner when it reads the leases.
     */
    Mono<Void> drain() {
        if (!shared) {
            return Mono.empty();
        }
        Mono<Void> outwaited = Mono.delay(limit, clock)
                .doOnNext(late -> log.warn("stopping although requests still arrive {} after the drain began: the load balancer"
                        + " still sends work here; its health checks on /actuator/health/readiness should take a replica out"
                        + " within tether.replicas.drain-delay ({})", limit, delay))
                .then();
        return Mono.fromRunnable(traffic::drain)
                .then(lease.drain())
                .then(Mono.fromRunnable(owners::leave))
                .then(Mono.firstWithSignal(traffic.quiet(delay), outwaited))
                .doOnSubscribe(started -> log.info("stopping: handing connections to the other replicas, listening until no"
                        + " request has come for {}", delay))
                .doOnSuccess(done -> log.info("stopping: drained, the web server stops listening"))
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
