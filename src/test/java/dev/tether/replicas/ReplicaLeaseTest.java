package dev.tether.replicas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.store.leases.InstanceLeases;
import dev.tether.store.leases.InstanceLeases.Lease;
import dev.tether.testsupport.Await;

/**
 * A replica's own lease in virtual time, over the lease table (H2 in memory, migrated as the daemon's): a renewal that
 * finds the lease taken by a peer ends every child of the replica's connections before it writes the lease anew, and
 * until then the replica serves nothing ({@link ReplicaLease#serving}); a lease that merely ran out (renewals late,
 * nobody took it) is extended and nothing is torn down; before the first renewal a child's start waits for it; a store
 * out of reach for a lease's length fails what waits.
 */
class ReplicaLeaseTest {

    private static final Duration BOUND = Duration.ofSeconds(10);
    private static final ReplicaProperties PROPERTIES = ReplicaProperties.defaults();

    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final InstanceLeases leases = ConnectionOwnersTest.migratedLeases();
    private final List<String> endings = new CopyOnWriteArrayList<>();
    private final Sinks.Empty<Void> childrenGone = Sinks.empty();

    @AfterEach
    void stopClock() {
        clock.dispose();
    }

    @Test
    void aLeaseTakenWhileTheReplicaWasSilentEndsItsChildrenBeforeItIsWrittenAnewAndAnythingIsServed() throws Exception {
        ReplicaLease lease = lease("frozen01");
        assertThat(lease.renew().block(BOUND)).as("written the first time").isFalse();
        assertThat(lease.holds()).isTrue();
        assertThat(lease.lapsed()).isFalse();

        // Frozen past its lease; a peer found it silent and claimed it.
        clock.advanceTimeBy(PROPERTIES.leaseTtl().plusSeconds(1));
        Instant now = now();
        Lease taken = leases.expired(now).blockFirst(BOUND);
        assertThat(leases.claim(taken, "peer0001", now, now.plus(PROPERTIES.leaseTtl())).block(BOUND)).isTrue();
        assertThat(lease.lapsed()).as("thawed: nothing is served before a renewal says whether the lease holds").isTrue();

        CompletableFuture<Void> served = lease.serving().toFuture();
        Await.until(() -> !endings.isEmpty(), BOUND, () -> "the children are told to end");
        assertThat(endings).containsExactly("replica frozen01 was taken for dead by a peer");
        assertThat(served).as("while the children are still ending").isNotDone();
        assertThat(lease.holds()).as("not ready").isFalse();
        assertThat(standing()).as("the lease is not written anew before they are gone").doesNotContain("frozen01");

        childrenGone.tryEmitEmpty();
        served.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertThat(standing()).as("back, under the same id").contains("frozen01");
        assertThat(leases.takenForDead("frozen01").block(BOUND)).isFalse();
        assertThat(lease.holds()).isTrue();
        assertThat(lease.lapsed()).isFalse();
        assertThat(lease.renew().block(BOUND)).as("extended from then on").isTrue();
        assertThat(endings).hasSize(1);
    }

    @Test
    void aLeaseThatMerelyRanOutIsExtendedAndNothingIsTornDown() {
        ReplicaLease lease = lease("starved1");
        lease.renew().block(BOUND);
        clock.advanceTimeBy(PROPERTIES.leaseTtl().plusSeconds(1));
        assertThat(lease.lapsed()).isTrue();
        assertThat(lease.holds()).as("not ready while its lease has run out").isFalse();

        lease.serving().block(BOUND);

        assertThat(endings).as("nobody took it: a peer acts only on a claim").isEmpty();
        assertThat(lease.holds()).isTrue();
        assertThat(leases.standing().map(Lease::expiresAt).blockFirst(BOUND)).isEqualTo(now().plus(PROPERTIES.leaseTtl()));
    }

    @Test
    void beforeItsFirstRenewalAReplicaWaitsForItAndAStoreOutOfReachFailsWhatWaits() throws Exception {
        ReplicaLease lease = new ReplicaLease(leases, "first001", PROPERTIES, PROPERTIES::address, () -> reason -> {
            endings.add(reason);
            return Mono.empty();
        }, true, clock);
        assertThat(lease.lapsed()).as("never held: requests pass, child starts wait").isFalse();
        lease.serving().block(BOUND);
        assertThat(standing()).contains("first001");

        ReplicaLease unreachable = new ReplicaLease(new Unreachable(leases), "gone0001", PROPERTIES, PROPERTIES::address,
                () -> LocalChildren.NONE, true, clock);
        CompletableFuture<Void> waiting = unreachable.serving().toFuture();
        clock.advanceTimeBy(PROPERTIES.leaseTtl().minusMillis(1));
        assertThat(waiting).isNotDone();
        clock.advanceTimeBy(Duration.ofMillis(1));
        assertThatThrownBy(() -> waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(LeaseLostException.class).hasMessageContaining("gone0001")
                .hasMessageContaining("could not renew it within " + PROPERTIES.leaseTtl());
        assertThat(endings).isEmpty();
    }

    private ReplicaLease lease(String instance) {
        return new ReplicaLease(leases, instance, PROPERTIES, PROPERTIES::address, () -> reason -> {
            endings.add(reason);
            return childrenGone.asMono();
        }, true, clock);
    }

    private List<String> standing() {
        return leases.standing().map(Lease::instance).collectList().block(BOUND);
    }

    private Instant now() {
        return Instant.ofEpochMilli(clock.now(TimeUnit.MILLISECONDS));
    }

    /** A store whose lease writes all fail, as when it is out of reach. */
    private record Unreachable(InstanceLeases delegate) implements InstanceLeases {

        @Override
        public Mono<String> storeIdentity() {
            return delegate.storeIdentity();
        }

        @Override
        public Mono<Boolean> extend(Lease lease) {
            return Mono.error(new IllegalStateException("the store is out of reach"));
        }

        @Override
        public Mono<Void> writeAnew(Lease lease) {
            return Mono.error(new IllegalStateException("the store is out of reach"));
        }

        @Override
        public Mono<Void> drain(String instance) {
            return delegate.drain(instance);
        }

        @Override
        public Mono<Void> release(String instance) {
            return delegate.release(instance);
        }

        @Override
        public reactor.core.publisher.Flux<Lease> standing() {
            return delegate.standing();
        }

        @Override
        public reactor.core.publisher.Flux<Lease> expired(Instant now) {
            return delegate.expired(now);
        }

        @Override
        public Mono<Boolean> claim(Lease lease, String claimer, Instant now, Instant until) {
            return delegate.claim(lease, claimer, now, until);
        }

        @Override
        public Mono<Void> unclaim(String instance, String claimer) {
            return delegate.unclaim(instance, claimer);
        }

        @Override
        public Mono<Boolean> reaped(String instance, String claimer, Instant until) {
            return delegate.reaped(instance, claimer, until);
        }

        @Override
        public reactor.core.publisher.Flux<Tombstone> tombstones() {
            return delegate.tombstones();
        }

        @Override
        public Mono<Void> bury(String instance, Instant now) {
            return delegate.bury(instance, now);
        }

        @Override
        public Mono<Boolean> takenForDead(String instance) {
            return delegate.takenForDead(instance);
        }
    }
}
