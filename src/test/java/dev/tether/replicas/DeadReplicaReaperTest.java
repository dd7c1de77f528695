package dev.tether.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactoryOptions;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.health.contributor.Status;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.docker.ContainerReaper;
import dev.tether.docker.DockerEngine;
import dev.tether.docker.DockerProperties;
import dev.tether.docker.InstanceId;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ProcessProperties;
import dev.tether.store.leases.InstanceLeases;
import dev.tether.store.leases.TestLeases;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresDocker;
import dev.tether.testsupport.RequiresPostgres;
import dev.tether.testsupport.TestImages;

/**
 * Three replicas on one PostgreSQL and one Docker engine: replica A holds a lease and a container, then goes silent
 * (as after {@code kill -9}); once its lease has run out, the two live peers look at the same moment, exactly one
 * of them removes A's container, and neither touches a container of a replica whose lease is alive. Each replica
 * has a clock of its own in virtual time, set to the wall clock, since Docker stamps containers with real time.
 */
@RequiresDocker
@RequiresPostgres
class DeadReplicaReaperTest {

    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final ReplicaProperties PROPERTIES = ReplicaProperties.defaults();

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final VirtualTimeScheduler clockA = VirtualTimeScheduler.create();
    private final VirtualTimeScheduler clockB = VirtualTimeScheduler.create();
    private final VirtualTimeScheduler clockC = VirtualTimeScheduler.create();
    private InstanceLeases leases;
    private PostgresDatabase postgres;
    private String schema;
    private ContainerReaper containers;
    private DockerEngine engine;
    private ChildProcesses children;

    @BeforeEach
    void setUp() {
        postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        schema = postgres.createSchema("replicas_test");
        Flyway.configure().dataSource(postgres.jdbcUrl(schema), postgres.user(), postgres.password()).load().migrate();
        leases = TestLeases.of(DatabaseClient.create(ConnectionFactories.get(ConnectionFactoryOptions
                .parse(postgres.r2dbcUrl(schema)).mutate()
                .option(ConnectionFactoryOptions.USER, postgres.user())
                .option(ConnectionFactoryOptions.PASSWORD, postgres.password())
                .build())));
        engine = new DockerEngine(new DockerProperties(null, null, null), JsonMapper.builder().build());
        children = new ChildProcesses(ProcessProperties.defaults(), guard.tether(), engine, meters);
        containers = new ContainerReaper(engine, new InstanceId(guard.tether()), children, new DockerProperties(null, null, null),
                meters);
        Instant now = Instant.now();
        List.of(clockA, clockB, clockC).forEach(clock -> clock.advanceTimeTo(now));
    }

    @AfterEach
    void stopClocks() {
        List.of(clockA, clockB, clockC).forEach(VirtualTimeScheduler::dispose);
    }

    @Test
    void aSilentReplicasContainersAreRemovedOnceItsLeaseRunsOutByExactlyOnePeer() {
        String a = "a" + guard.marker().substring(0, 7);
        String live = "b" + guard.marker().substring(0, 7);
        String left = startContainerOf(a);
        String kept = startContainerOf(live);
        // The clocks read the wall clock once the containers exist: starting one can take seconds on a loaded machine.
        Instant now = Instant.now();
        List.of(clockA, clockB, clockC).forEach(clock -> clock.advanceTimeTo(now));
        ReplicaLease leaseA = new ReplicaLease(leases, a, PROPERTIES, true, clockA);
        ReplicaLease leaseB = new ReplicaLease(leases, live, PROPERTIES, true, clockB);
        DeadReplicaReaper reaperB = new DeadReplicaReaper(leases, containers, live, PROPERTIES, true, clockB);
        DeadReplicaReaper reaperC = new DeadReplicaReaper(leases, containers, "c" + guard.marker().substring(0, 7), PROPERTIES,
                true, clockC);
        try {
            assertThat(leaseA.renew().block(BOUND)).as("A's first lease is written anew").isFalse();
            assertThat(reaperB.reapOnce().block(BOUND)).as("A's lease is alive: nothing to reap").isZero();
            assertThat(DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, a)).hasSize(1);

            // A is silent from here on; B renews, as a live replica does, past A's lease.
            Duration past = PROPERTIES.leaseTtl().plusSeconds(1);
            clockB.advanceTimeBy(past);
            clockC.advanceTimeBy(past);
            leaseB.renew().block(BOUND);

            List<Long> removed = Flux.merge(reaperB.reapOnce(), reaperC.reapOnce()).collectList().block(BOUND);
            assertThat(removed).as("containers each peer removed").containsExactlyInAnyOrder(1L, 0L);
            assertThat(DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, a)).as("A's container " + left).isEmpty();
            assertThat(DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, live)).as("the live replica's container")
                    .hasSize(1);
            assertThat(meters.get("tether.children.reaped").counter().count()).isEqualTo(1.0);

            assertThat(leaseA.renew().block(BOUND)).as("A, back after all, finds its lease taken and writes it anew").isFalse();
            assertThat(reaperB.reapOnce().block(BOUND)).isZero();
        }
        finally {
            engine.remove(kept).block(BOUND);
        }
    }

    /**
     * A dead replica's {@code docker run} client may have its container created after the peer reaped it, when a slow
     * engine gets to it: its row stays a tombstone, every live peer removes what carries its label at each heartbeat, and
     * once the tombstone ends the row goes. A replica that comes back under the same id writes its lease anew, which
     * ends the tombstone at once, and what it starts then is its own.
     */
    @Test
    void aReapedReplicasLateContainersAreRemovedUntilItsTombstoneEnds() {
        String a = "g" + guard.marker().substring(0, 7);
        String b = "h" + guard.marker().substring(0, 7);
        String c = "i" + guard.marker().substring(0, 7);
        Instant now = Instant.now();
        List.of(clockA, clockB, clockC).forEach(clock -> clock.advanceTimeTo(now));
        ReplicaLease leaseA = new ReplicaLease(leases, a, PROPERTIES, true, clockA);
        leaseA.renew().block(BOUND);
        DeadReplicaReaper reaperB = new DeadReplicaReaper(leases, containers, b, PROPERTIES, true, clockB);
        DeadReplicaReaper reaperC = new DeadReplicaReaper(leases, containers, c, PROPERTIES, true, clockC);
        clockB.advanceTimeBy(PROPERTIES.leaseTtl().plusSeconds(1));
        clockC.advanceTimeBy(PROPERTIES.leaseTtl().plusSeconds(1));
        assertThat(reaperB.reapOnce().block(BOUND)).as("A left nothing yet").isZero();
        assertThat(leases.tombstones().map(InstanceLeases.Tombstone::instance).collectList().block(BOUND)).containsExactly(a);

        String late = startContainerOf(a);
        assertThat(reaperC.reapOnce().block(BOUND)).as("a late container, removed by any peer").isEqualTo(1L);
        assertThat(DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, a)).as("A's late container " + late).isEmpty();
        assertThat(leases.expired(Instant.ofEpochMilli(clockC.now(TimeUnit.MILLISECONDS))).collectList().block(BOUND))
                .as("reaped once, never claimed again").isEmpty();

        clockB.advanceTimeBy(PROPERTIES.tombstone().plusSeconds(1));
        assertThat(reaperB.reapOnce().block(BOUND)).isZero();
        assertThat(leases.tombstones().collectList().block(BOUND)).as("buried once it ended").isEmpty();

        // A again, reaped again, then back under the same id: its lease is written anew, and its new container is its own.
        leaseA = new ReplicaLease(leases, a, PROPERTIES, true, clockA);
        leaseA.renew().block(BOUND);
        clockB.advanceTimeBy(PROPERTIES.leaseTtl().plusSeconds(1));
        reaperB.reapOnce().block(BOUND);
        assertThat(leases.tombstones().map(InstanceLeases.Tombstone::instance).collectList().block(BOUND)).containsExactly(a);
        clockA.advanceTimeTo(Instant.ofEpochMilli(clockB.now(TimeUnit.MILLISECONDS)));
        assertThat(leaseA.renew().block(BOUND)).as("A finds its lease taken and writes it anew").isFalse();
        String own = startContainerOf(a);
        try {
            assertThat(reaperB.reapOnce().block(BOUND)).isZero();
            assertThat(DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, a)).as("A's own new container").hasSize(1);
        }
        finally {
            engine.remove(own).block(BOUND);
        }
    }

    @Test
    void aRemovalThatFailsIsTriedAgainAtTheNextHeartbeatAndTheLeaseGoesOnlyOnceTheContainersDo() throws IOException {
        String a = "d" + guard.marker().substring(0, 7);
        String b = "e" + guard.marker().substring(0, 7);
        String left = startContainerOf(a);
        // B reaches the engine at a socket that is not there yet, as while the engine restarts.
        Path socket = Files.createTempDirectory("tether-engine").resolve("docker.sock");
        DockerProperties late = new DockerProperties(socket, null, null);
        ContainerReaper lateContainers = new ContainerReaper(new DockerEngine(late, JsonMapper.builder().build()),
                new InstanceId(guard.tether()), children, late, meters);
        Instant now = Instant.now();
        List.of(clockA, clockB).forEach(clock -> clock.advanceTimeTo(now));
        new ReplicaLease(leases, a, PROPERTIES, true, clockA).renew().block(BOUND);
        clockB.advanceTimeBy(PROPERTIES.leaseTtl().plusSeconds(1));
        DeadReplicaReaper reaperB = new DeadReplicaReaper(leases, lateContainers, b, PROPERTIES, true, clockB);
        try {
            assertThat(reaperB.reapOnce().block(BOUND)).as("the engine is out of reach").isZero();
            assertThat(DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, a)).as("A's container " + left).hasSize(1);
            assertThat(expiredLeases()).as("A's lease is kept for the next try").containsExactly(a);

            Files.createSymbolicLink(socket, new DockerProperties(null, null, null).socket());
            reaperB.start();
            clockB.advanceTimeBy(PROPERTIES.heartbeat());

            Await.until(() -> DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, a).isEmpty(), BOUND,
                    () -> "A's container is removed at the next heartbeat");
            Await.until(() -> expiredLeases().isEmpty(), BOUND, () -> "A's lease is reaped once its container has gone");
            assertThat(meters.get("tether.children.reaped").counter().count()).isEqualTo(1.0);
        }
        finally {
            reaperB.stop();
            engine.remove(left).block(BOUND);
        }
    }

    /**
     * A replica whose lease ran out but that answers at its address is slow (starved of CPU, its renewals late), not
     * dead: its container and its connections stay its own. One that takes the connection but never answers (frozen:
     * the kernel accepts for a stopped process) is taken for dead once {@code probe-timeout} has passed, and its
     * connections move at once.
     */
    @Test
    void aReplicaWhoseLeaseRanOutIsTakenForDeadOnlyWhenItDoesNotAnswer() throws Exception {
        String a = "j" + guard.marker().substring(0, 7);
        String left = startContainerOf(a);
        Instant now = Instant.now();
        List.of(clockA, clockB).forEach(clock -> clock.advanceTimeTo(now));
        new ReplicaLease(leases, a, PROPERTIES, true, clockA).renew().block(BOUND);
        clockB.advanceTimeBy(PROPERTIES.leaseTtl().plusSeconds(1));
        java.util.concurrent.atomic.AtomicBoolean answering = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger decided = new java.util.concurrent.atomic.AtomicInteger();
        PeerProbe probe = lease -> {
            asked.incrementAndGet();
            return answering.get() && lease.instance().equals(a) ? Mono.just(true) : Mono.never();
        };
        DeadReplicaReaper reaperB = new DeadReplicaReaper(leases, containers, probe, decided::incrementAndGet,
                "k" + guard.marker().substring(0, 7), PROPERTIES, true, clockB, meters);
        try {
            assertThat(reaperB.reapOnce().block(BOUND)).as("A answers: slow, not dead").isZero();
            assertThat(DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, a)).as("A's container").hasSize(1);
            assertThat(leases.standing().map(InstanceLeases.Lease::instance).collectList().block(BOUND)).as("A stands").contains(a);
            assertThat(meters.get("tether.replicas.probes").tag("outcome", "answered").counter().count()).isEqualTo(1.0);
            assertThat(decided).hasValue(0);

            answering.set(false);
            int before = asked.get();
            java.util.concurrent.CompletableFuture<Long> reaped = reaperB.reapOnce().toFuture();
            Await.until(() -> asked.get() > before, BOUND, () -> "A is asked again");
            clockB.advanceTimeBy(PROPERTIES.probeTimeout().minusMillis(1));
            assertThat(reaped).as("within the probe timeout").isNotDone();
            clockB.advanceTimeBy(Duration.ofMillis(1));

            assertThat(reaped.get(BOUND.toSeconds(), TimeUnit.SECONDS)).as("A is silent: taken for dead").isEqualTo(1L);
            assertThat(DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, a)).as("A's container " + left).isEmpty();
            assertThat(leases.standing().map(InstanceLeases.Lease::instance).collectList().block(BOUND)).doesNotContain(a);
            assertThat(decided).as("its connections move at once").hasValue(1);
            assertThat(meters.get("tether.replicas.probes").tag("outcome", "silent").counter().count()).isEqualTo(1.0);
        }
        finally {
            engine.remove(left).block(BOUND);
        }
    }

    @Test
    void aClaimWhoseClaimerDiedRunsOutAndAnotherPeerReaps() {
        String a = "f" + guard.marker().substring(0, 7);
        String left = startContainerOf(a);
        Instant now = Instant.now();
        List.of(clockA, clockC).forEach(clock -> clock.advanceTimeTo(now));
        new ReplicaLease(leases, a, PROPERTIES, true, clockA).renew().block(BOUND);
        clockC.advanceTimeBy(PROPERTIES.leaseTtl().plusSeconds(1));
        Instant claimedAt = Instant.ofEpochMilli(clockC.now(TimeUnit.MILLISECONDS));
        InstanceLeases.Lease leaseA = leases.expired(claimedAt).filter(lease -> lease.instance().equals(a)).blockFirst(BOUND);
        // Replica B claims A's leftovers, then dies before it removes anything.
        assertThat(leases.claim(leaseA, "gone0002", claimedAt, claimedAt.plus(PROPERTIES.leaseTtl())).block(BOUND)).isTrue();
        DeadReplicaReaper reaperC = new DeadReplicaReaper(leases, containers, "c" + guard.marker().substring(0, 7), PROPERTIES,
                true, clockC);
        try {
            assertThat(reaperC.reapOnce().block(BOUND)).as("B's claim is running").isZero();
            assertThat(DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, a)).hasSize(1);

            clockC.advanceTimeBy(PROPERTIES.leaseTtl().plusSeconds(1));
            assertThat(reaperC.reapOnce().block(BOUND)).as("B's claim ran out").isEqualTo(1L);
            assertThat(DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, a)).isEmpty();
            assertThat(expiredLeases()).as("reaped: a tombstone").isEmpty();
        }
        finally {
            engine.remove(left).block(BOUND);
        }
    }

    private List<String> expiredLeases() {
        return leases.expired(Instant.now().plus(Duration.ofDays(1))).map(InstanceLeases.Lease::instance).collectList()
                .block(BOUND);
    }

    @Test
    void aReplicaOnAnEmbeddedStoreKeepsNoLeaseAndReapsNothing() {
        DeadReplicaReaper reaper = new DeadReplicaReaper(leases, containers, "solo0001", PROPERTIES, false, clockB);
        ReplicaLease lease = new ReplicaLease(leases, "solo0001", PROPERTIES, false, clockB);
        lease.start();
        reaper.start();
        clockB.advanceTimeBy(PROPERTIES.leaseTtl().multipliedBy(2));

        assertThat(lease.isRunning()).isFalse();
        assertThat(reaper.isRunning()).isFalse();
        assertThat(new LeaseReadinessIndicator(lease).health().getStatus()).as("ready without a lease to hold").isEqualTo(Status.UP);
        assertThat(leases.expired(Instant.now().plus(Duration.ofDays(1))).collectList().block(BOUND)).isEmpty();
    }

    @Test
    void aGracefulStopGivesTheLeaseBackAtOnce() {
        ReplicaLease lease = new ReplicaLease(leases, "gone0001", PROPERTIES, true, clockA);
        lease.start();
        clockA.advanceTime();
        Await.until(() -> !leases.expired(Instant.now().plus(Duration.ofDays(1))).collectList().block(BOUND).isEmpty(), BOUND,
                () -> "the lease is written");

        java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
        lease.stop(stopped::countDown);

        Await.until(() -> stopped.getCount() == 0, BOUND, () -> "the stop completes");
        assertThat(leases.expired(Instant.now().plus(Duration.ofDays(1))).collectList().block(BOUND)).as("released").isEmpty();
        assertThat(lease.isRunning()).isFalse();
    }

    @Test
    void readinessFollowsTheLeaseFromTheFirstRenewalUntilTheStoreIsLostForLongerThanTheLease() throws SQLException {
        ReplicaLease lease = new ReplicaLease(leases, "ready001", PROPERTIES, true, clockA);
        LeaseReadinessIndicator readiness = new LeaseReadinessIndicator(lease);
        assertThat(readiness.health().getStatus()).as("before the first renewal").isEqualTo(Status.DOWN);

        lease.start();
        clockA.advanceTime();
        Await.until(() -> readiness.health().getStatus().equals(Status.UP), BOUND, () -> "ready once the lease is written");

        // The store is lost (its table gone): renewals fail, and the lease written last runs out.
        try (Connection connection = DriverManager.getConnection(postgres.jdbcUrl(schema), postgres.user(), postgres.password())) {
            connection.createStatement().execute("DROP TABLE instance_lease");
        }
        clockA.advanceTimeBy(PROPERTIES.leaseTtl().minusSeconds(1));
        assertThat(readiness.health().getStatus()).as("still within the lease written last").isEqualTo(Status.UP);
        clockA.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(readiness.health().getStatus()).as("the lease ran out unrenewed").isEqualTo(Status.DOWN);
        assertThat(readiness.health().getDetails()).containsEntry("reason", "no live lease on the shared store");
        lease.stop();
    }

    @Test
    void aReplicaStoppingIsNotReadyAtOnce() {
        ReplicaLease lease = new ReplicaLease(leases, "stop0001", PROPERTIES, true, clockA);
        lease.start();
        clockA.advanceTime();
        Await.until(lease::holds, BOUND, () -> "the lease is written");

        lease.stop(() -> { });

        assertThat(lease.holds()).as("from the stop on, before the lease is given back").isFalse();
    }

    /** A container labelled as Tether labels its children's, running an idle node. */
    private String startContainerOf(String instance) {
        try {
            Process docker = new ProcessBuilder("docker", "run", "-d", "--label", LifecycleGuard.INSTANCE_LABEL + "=" + instance,
                    "--label", "tether.session=s" + instance, "--label", Fixture.DOCKER_LABEL + "=true",
                    "--label", LifecycleGuard.RUN_LABEL + "=" + guard.marker(),
                    TestImages.nodeImage(), "node", "-e", "setInterval(() => {}, 1000)").redirectErrorStream(true).start();
            String out = new String(docker.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            assertThat(docker.waitFor(60, TimeUnit.SECONDS)).as("docker run -d returns").isTrue();
            assertThat(docker.exitValue()).as(out).isZero();
            return out.lines().reduce((first, second) -> second).orElseThrow();
        }
        catch (java.io.IOException ex) {
            throw new IllegalStateException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
