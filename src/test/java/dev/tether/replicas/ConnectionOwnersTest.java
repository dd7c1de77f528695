package dev.tether.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactoryOptions;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;
import dev.tether.store.leases.InstanceLeases.Lease;
import dev.tether.store.leases.InstanceLeases;
import dev.tether.store.leases.TestLeases;

/**
 * Rendezvous ownership over the lease table (H2 in memory, migrated as the daemon's): every replica that reads the
 * same leases picks the same owner, connections spread evenly, a replica that leaves moves only its own share, and
 * a replica taken for dead, a draining one or one without a port owns nothing; one whose lease merely ran out still
 * owns its connections until a peer confirms it dead.
 */
class ConnectionOwnersTest {

    private static final Duration BOUND = Duration.ofSeconds(10);

    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

    @AfterEach
    void stopClock() {
        clock.dispose();
    }

    @Test
    void connectionsSpreadEvenlyAndOnlyTheLeaversShareMoves() {
        List<String> three = List.of("inst-a", "inst-b", "inst-c");
        Map<String, String> owners = new HashMap<>();
        IntStream.range(0, 3000).forEach(i -> owners.put("org/server" + i + "/default",
                ConnectionOwners.owner("org/server" + i + "/default", three)));
        for (String instance : three) {
            assertThat(owners.values().stream().filter(instance::equals).count()).as("connections owned by " + instance)
                    .isBetween(850L, 1150L);
        }
        List<String> two = List.of("inst-b", "inst-a"); // order does not matter
        owners.forEach((connection, owner) -> {
            String after = ConnectionOwners.owner(connection, two);
            if (!owner.equals("inst-c")) {
                assertThat(after).as(connection + " stays where it was").isEqualTo(owner);
            }
        });
    }

    @Test
    void ownershipFollowsTheLiveLeases() {
        InstanceLeases leases = migratedLeases();
        Instant now = Instant.ofEpochMilli(clock.now(TimeUnit.MILLISECONDS));
        leases.renew(new Lease("inst-a", "127.0.0.1:4001", now, now.plusSeconds(60))).block(BOUND);
        leases.renew(new Lease("inst-b", "10.0.0.2:4002", now, now.plusSeconds(5))).block(BOUND);
        leases.renew(new Lease("inst-c", "pod-c", now, now.plusSeconds(60))).block(BOUND); // no port yet: no peer
        ConnectionOwners a = new ConnectionOwners(leases, "inst-a", ReplicaProperties.defaults(), true, clock);
        ConnectionKey ofA = ownedBy("inst-a", List.of("inst-a", "inst-b"));
        ConnectionKey ofB = ownedBy("inst-b", List.of("inst-a", "inst-b"));

        assertThat(a.remoteOwner(ofB)).as("before the leases are read, everything is served here").isEmpty();
        assertThat(a.refresh().block(BOUND)).isEqualTo(2);
        assertThat(a.remoteOwner(ofB)).contains(new ConnectionOwners.Peer("inst-b", "10.0.0.2:4002"));
        assertThat(a.remoteOwner(ofA)).isEmpty();

        clock.advanceTimeBy(Duration.ofSeconds(6)); // b's lease runs out, not yet claimed by anyone
        assertThat(a.refresh().block(BOUND)).as("b may only be slow: alive until a peer confirms it dead").isEqualTo(2);
        assertThat(a.remoteOwner(ofB)).contains(new ConnectionOwners.Peer("inst-b", "10.0.0.2:4002"));

        Instant later = Instant.ofEpochMilli(clock.now(TimeUnit.MILLISECONDS));
        Lease ofInstanceB = leases.expired(later).blockFirst(BOUND);
        assertThat(leases.claim(ofInstanceB, "inst-a", later, later.plusSeconds(15)).block(BOUND)).isTrue();
        assertThat(a.refresh().block(BOUND)).isEqualTo(1);
        assertThat(a.remoteOwner(ofB)).as("b's connection moves here once b is taken for dead").isEmpty();

        ConnectionOwners embedded = new ConnectionOwners(leases, "inst-a", ReplicaProperties.defaults(), false, clock);
        assertThat(embedded.shared()).isFalse();
        assertThat(embedded.remoteOwner(ofB)).isEmpty();
    }

    @Test
    void aDrainingReplicaOwnsNothingAndPassesItsOwnRequestsToThePeersThatRemain() {
        InstanceLeases leases = migratedLeases();
        Instant now = Instant.ofEpochMilli(clock.now(TimeUnit.MILLISECONDS));
        for (String instance : List.of("inst-a", "inst-b", "inst-c")) {
            leases.renew(new Lease(instance, "127.0.0.1:" + (4000 + instance.charAt(5)), now, now.plusSeconds(60))).block(BOUND);
        }
        ConnectionOwners a = new ConnectionOwners(leases, "inst-a", ReplicaProperties.defaults(), true, clock);
        ConnectionOwners b = new ConnectionOwners(leases, "inst-b", ReplicaProperties.defaults(), true, clock);
        ConnectionKey ofA = ownedBy("inst-a", List.of("inst-a", "inst-b", "inst-c"));
        String heirOfA = ConnectionOwners.owner(ofA.toString(), List.of("inst-b", "inst-c"));
        a.refresh().block(BOUND);
        b.refresh().block(BOUND);
        assertThat(b.remoteOwner(ofA).map(ConnectionOwners.Peer::instance)).contains("inst-a");

        a.leave();
        assertThat(a.leaving()).isTrue();
        assertThat(a.remoteOwner(ofA).map(ConnectionOwners.Peer::instance)).as("a leaving replica passes its own connection on")
                .contains(heirOfA);
        assertThat(b.remoteOwner(ofA).map(ConnectionOwners.Peer::instance)).as("b has not read a's mark yet").contains("inst-a");
        leases.drain("inst-a").block(BOUND);
        assertThat(b.remoteOwnerAfresh(ofA).block(BOUND).map(ConnectionOwners.Peer::instance))
                .as("read again, the leases name a's heir").isEqualTo(heirOfA.equals("inst-b") ? Optional.empty()
                        : Optional.of("inst-c"));
        assertThat(b.peer("inst-a")).as("a draining replica is still reached for what it holds in memory").isPresent();
        assertThat(a.refresh().block(BOUND)).as("draining, still alive").isEqualTo(3);

        leases.drain("inst-b").block(BOUND);
        leases.drain("inst-c").block(BOUND);
        a.refresh().block(BOUND);
        assertThat(a.remoteOwner(ofA)).as("the last to leave serves what reaches it").isEmpty();
    }

    @Test
    void anAdvertisedAddressNamesAPort() {
        assertThat(List.of("pod:4788", "10.1.2.3:80", "[fd00::1]:4788")).allMatch(AdvertisedAddress::hasPort);
        assertThat(List.of("pod", "pod:", "pod:0", "fd00::1", "pod:http")).noneMatch(AdvertisedAddress::hasPort);
    }

    private static ConnectionKey ownedBy(String instance, List<String> instances) {
        return IntStream.range(0, 1000).mapToObj(i -> ConnectionKey.org("server" + i, "default"))
                .filter(key -> ConnectionOwners.owner(key.toString(), instances).equals(instance))
                .findFirst().orElseThrow();
    }

    /** A fresh lease table in H2 in memory, migrated as the daemon's. */
    static InstanceLeases migratedLeases() {
        String name = "owners-" + UUID.randomUUID();
        Flyway.configure().dataSource("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1", "sa", "").load().migrate();
        return TestLeases.of(DatabaseClient.create(ConnectionFactories.get(ConnectionFactoryOptions
                .parse("r2dbc:h2:mem:///" + name + "?DB_CLOSE_DELAY=-1").mutate()
                .option(ConnectionFactoryOptions.USER, "sa").option(ConnectionFactoryOptions.PASSWORD, "").build())));
    }
}
