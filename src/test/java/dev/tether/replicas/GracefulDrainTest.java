package dev.tether.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.store.ConnectionKey;
import dev.tether.store.InstanceLeases;
import dev.tether.store.InstanceLeases.Lease;
import dev.tether.store.Owner;

/**
 * A replica's graceful stop over the lease table (H2 in memory, migrated as the daemon's), in virtual time: readiness
 * goes down at once, the lease is marked draining in the store before this replica gives its connections up, the
 * drain lasts the delay and no longer, and the lease stays alive, renewed with its mark, until it is given back.
 */
class GracefulDrainTest {

    private static final Duration BOUND = Duration.ofSeconds(10);
    private static final Duration DELAY = Duration.ofSeconds(2);

    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

    @AfterEach
    void stopClock() {
        clock.dispose();
    }

    @Test
    void aDrainMarksTheLeaseThenGivesUpOwnershipAndLastsTheDelay() {
        InstanceLeases leases = ConnectionOwnersTest.migratedLeases();
        ReplicaProperties properties = new ReplicaProperties(null, null, "127.0.0.1:4001", null, DELAY, null, null, null);
        ReplicaLease lease = new ReplicaLease(leases, "inst-a", properties, true, clock);
        ConnectionOwners owners = new ConnectionOwners(leases, "inst-a", properties, true, clock);
        ConnectionOwners peer = new ConnectionOwners(leases, "inst-b", properties, true, clock);
        Instant now = Instant.ofEpochMilli(clock.now(TimeUnit.MILLISECONDS));
        leases.renew(new Lease("inst-b", "127.0.0.1:4002", now, now.plusSeconds(60))).block(BOUND);
        lease.renew().block(BOUND);
        owners.refresh().block(BOUND);
        ConnectionKey ofA = ownedBy("inst-a");
        assertThat(lease.holds()).isTrue();
        assertThat(owners.remoteOwner(ofA)).isEmpty();
        GracefulDrain drain = new GracefulDrain(lease, owners, DELAY, true, clock);

        StepVerifier.withVirtualTime(drain::drain, () -> clock, Long.MAX_VALUE)
                .expectSubscription()
                .then(() -> {
                    assertThat(lease.holds()).as("ready no more").isFalse();
                    assertThat(liveDraining(leases, "inst-a")).as("the store has the mark").isTrue();
                    assertThat(owners.leaving()).isTrue();
                    assertThat(owners.remoteOwner(ofA).map(ConnectionOwners.Peer::instance)).contains("inst-b");
                    assertThat(peer.remoteOwnerAfresh(ofA).block(BOUND)).as("the peer takes a's connection over").isEmpty();
                })
                .expectNoEvent(DELAY.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectComplete()
                .verify(BOUND);

        clock.advanceTimeBy(Duration.ofSeconds(30));
        lease.renew().block(BOUND);
        assertThat(liveDraining(leases, "inst-a")).as("renewed, still alive and still draining").isTrue();
        assertThat(leases.expired(Instant.ofEpochMilli(clock.now(TimeUnit.MILLISECONDS))).collectList().block(BOUND))
                .as("nothing for a peer to reap while a drains").isEmpty();
        assertThat(lease.holds()).isFalse();
    }

    @Test
    void onAStoreNoOtherReplicaSharesThereIsNothingToDrain() {
        InstanceLeases leases = ConnectionOwnersTest.migratedLeases();
        ReplicaProperties properties = new ReplicaProperties(null, null, "127.0.0.1:4001", null, DELAY, null, null, null);
        ReplicaLease lease = new ReplicaLease(leases, "solo0001", properties, false, clock);
        ConnectionOwners owners = new ConnectionOwners(leases, "solo0001", properties, false, clock);
        StepVerifier.withVirtualTime(() -> new GracefulDrain(lease, owners, DELAY, false, clock).drain(), () -> clock, Long.MAX_VALUE)
                .expectSubscription()
                .expectComplete()
                .verify(BOUND);
        assertThat(owners.leaving()).isFalse();
        assertThat(lease.holds()).isTrue();
    }

    private static boolean liveDraining(InstanceLeases leases, String instance) {
        return Boolean.TRUE.equals(leases.standing().filter(lease -> lease.instance().equals(instance))
                .map(Lease::draining).blockFirst(BOUND));
    }

    private static ConnectionKey ownedBy(String instance) {
        return IntStream.range(0, 1000).mapToObj(i -> ConnectionKey.org("server" + i, "default"))
                .filter(key -> ConnectionOwners.owner(key.toString(), List.of("inst-a", "inst-b")).equals(instance))
                .findFirst().orElseThrow();
    }
}
