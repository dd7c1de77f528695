package dev.tether.replicas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactoryOptions;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.docker.ConnectionContainers;
import dev.tether.docker.DockerEngine;
import dev.tether.docker.DockerProperties;
import dev.tether.docker.InstanceId;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ProcessProperties;
import dev.tether.session.PoolHarness;
import dev.tether.session.StartFence;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;
import dev.tether.store.leases.InstanceLeases;
import dev.tether.store.leases.TestLeases;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresDocker;
import dev.tether.testsupport.RequiresPostgres;
import dev.tether.testsupport.TestImages;

/**
 * The fence before a connection's child starts, with a real Docker engine and real leases on PostgreSQL: a container of
 * the connection that a replica without a live lease left is removed first; a live peer's is waited for until it goes,
 * for at most {@code handover-wait}; every replica of one store names a connection's container alike, and another store
 * another way; and a dead replica's late container that takes the name between the fence's look and the start is
 * removed, and the start goes again.
 */
@RequiresDocker
@RequiresPostgres
class ConnectionFenceTest {

    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final ReplicaProperties PROPERTIES = ReplicaProperties.defaults();
    private static final ConnectionKey CONNECTION = ConnectionKey.org("fenced", "default");

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    @TempDir
    Path dir;

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final DockerEngine engine = new DockerEngine(new DockerProperties(null, null, null), JsonMapper.builder().build());
    private final VirtualTimeScheduler virtualClock = VirtualTimeScheduler.create();
    private PostgresDatabase postgres;
    private InstanceLeases leases;
    private ConnectionContainers containers;
    private String me;

    @BeforeEach
    void setUp() {
        postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        leases = migratedLeases(postgres.createSchema("fence_test"));
        InstanceId instance = new InstanceId(guard.tether());
        me = instance.value();
        containers = new ConnectionContainers(engine, instance,
                new ChildProcesses(ProcessProperties.defaults(), guard.tether(), engine, meters));
        virtualClock.advanceTimeTo(Instant.now());
    }

    @AfterEach
    void stopClock() {
        virtualClock.dispose();
    }

    @Test
    void aContainerOfTheConnectionThatAReplicaWithoutALiveLeaseLeftIsRemovedBeforeTheStart() {
        ConnectionFence fence = fence(Schedulers.parallel());
        String key = fence.key(CONNECTION).block(BOUND);
        String otherKey = fence.key(ConnectionKey.org("other", "default")).block(BOUND);
        String left = plant(key, "dead0001");
        String another = plant(otherKey, "dead0001");
        try {
            assertThat(fence.clear(CONNECTION, key).block(BOUND)).as("found one in the way").isTrue();

            assertThat(DockerContainers.withLabel("tether.connection", key)).as("the dead replica's container " + left).isEmpty();
            assertThat(DockerContainers.withLabel("tether.connection", otherKey)).as("another connection's").hasSize(1);
            assertThat(fence.clear(CONNECTION, key).block(BOUND)).as("nothing in the way now").isFalse();
        }
        finally {
            engine.remove(another).block(BOUND);
        }
    }

    @Test
    void aLivePeersContainerIsWaitedForUntilItGoes() throws Exception {
        new ReplicaLease(leases, "peer0001", PROPERTIES, true, Schedulers.parallel()).renew().block(BOUND);
        ConnectionFence fence = fence(Schedulers.parallel());
        String key = fence.key(CONNECTION).block(BOUND);
        String peers = plant(key, "peer0001");

        CompletableFuture<Boolean> cleared = fence.clear(CONNECTION, key).toFuture();
        Await.until(() -> waiting() == 1, BOUND, () -> "the start waits for the peer's container");
        assertThat(cleared).isNotDone();
        assertThat(DockerContainers.withLabel("tether.connection", key)).as("the peer's container, left alone").hasSize(1);

        assertThat(engine.remove(peers).block(BOUND)).as("the peer ends it, handing the connection over").isTrue();
        assertThat(cleared.get(BOUND.toSeconds(), TimeUnit.SECONDS)).as("found one in the way").isTrue();
        Await.until(() -> waiting() == 0, BOUND, () -> "no start waits any more");
    }

    @Test
    void aLivePeersContainerThatDoesNotGoWithinTheHandoverWaitFailsTheStartNamingIt() {
        new ReplicaLease(leases, "peer0002", PROPERTIES, true, virtualClock).renew().block(BOUND);
        ConnectionFence fence = fence(virtualClock);
        String key = fence.key(CONNECTION).block(BOUND);
        String peers = plant(key, "peer0002");
        try {
            CompletableFuture<Boolean> cleared = fence.clear(CONNECTION, key).toFuture();
            Await.until(() -> waiting() == 1, BOUND, () -> "the start waits for the peer's container");

            virtualClock.advanceTimeBy(PROPERTIES.handoverWait());

            assertThatThrownBy(() -> cleared.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(ConnectionHandoverException.class)
                    .hasMessageContaining("tether-" + key).hasMessageContaining("peer0002")
                    .hasMessageContaining("tether.replicas.handover-wait");
            Await.until(() -> waiting() == 0, BOUND, () -> "no start waits any more");
        }
        finally {
            engine.remove(peers).block(BOUND);
        }
    }

    @Test
    void everyReplicaOfAStoreNamesAConnectionsContainerAlikeAndAnotherStoreAnotherWay() {
        String key = fence(Schedulers.parallel()).key(CONNECTION).block(BOUND);
        ConnectionFence peer = new ConnectionFence(leases, containers, "peer0003", PROPERTIES, true, Schedulers.parallel(),
                new SimpleMeterRegistry());
        ConnectionFence elsewhere = new ConnectionFence(migratedLeases(postgres.createSchema("fence_other")), containers, me,
                PROPERTIES, true, Schedulers.parallel(), new SimpleMeterRegistry());

        assertThat(peer.key(CONNECTION).block(BOUND)).as("another replica of the store").isEqualTo(key);
        assertThat(peer.key(ConnectionKey.org("fenced", "other")).block(BOUND)).as("another connection").isNotEqualTo(key);
        assertThat(elsewhere.key(CONNECTION).block(BOUND)).as("the same connection of another store").isNotEqualTo(key);
        assertThat(key).matches("[0-9a-f]{24}");
    }

    /**
     * A dead replica's {@code docker run} client creates its container just after the fence looked (the engine was
     * slow): the engine refuses the new child its name, the fence, asked again, removes the dead one's container, and
     * the start goes again and succeeds. Never two containers of the connection.
     */
    @Test
    void aLateContainerThatTakesTheNameAfterTheLookIsRemovedAndTheStartGoesAgain() {
        AtomicBoolean planted = new AtomicBoolean();
        try (PoolHarness harness = PoolHarness.builder(dir).docker().fence((children, instance) -> {
            ConnectionFence real = new ConnectionFence(leases, new ConnectionContainers(engine, instance, children),
                    instance.value(), PROPERTIES, true, Schedulers.parallel(), meters);
            return (connection, container) -> real.key(connection).flatMap(key -> real.clear(connection, key)
                    .flatMap(found -> planted.compareAndSet(false, true)
                            ? Mono.fromCallable(() -> plant(key, "dead0004")).subscribeOn(Schedulers.boundedElastic()).thenReturn(found)
                            : Mono.just(found))
                    .map(found -> new StartFence.Cleared(Optional.of(key), found)));
        }).build()) {
            ConnectionKey connection = harness.connect("late", harness.dockerFixture("late"));

            String answered = harness.pool().withSession(connection, session -> session.ping().thenReturn("answered")).block(BOUND);

            assertThat(answered).isEqualTo("answered");
            assertThat(planted).isTrue();
            assertThat(harness.registry().get("tether.children.spawned").tag("kind", "docker").counter().count())
                    .as("docker run clients: the one refused the name, the one that started").isEqualTo(2.0);
            assertThat(DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, "dead0004")).as("the late container").isEmpty();
            assertThat(DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, harness.instanceId()))
                    .as("the child's container").singleElement()
                    .satisfies(container -> assertThat(container.getNames()[0]).startsWith("/tether-"));
        }
    }

    private ConnectionFence fence(reactor.core.scheduler.Scheduler clock) {
        return new ConnectionFence(leases, containers, me, PROPERTIES, true, clock, meters);
    }

    private double waiting() {
        return meters.get("tether.replicas.handover.waiting").gauge().value();
    }

    private InstanceLeases migratedLeases(String schema) {
        Flyway.configure().dataSource(postgres.jdbcUrl(schema), postgres.user(), postgres.password()).load().migrate();
        return TestLeases.of(DatabaseClient.create(ConnectionFactories.get(ConnectionFactoryOptions
                .parse(postgres.r2dbcUrl(schema)).mutate()
                .option(ConnectionFactoryOptions.USER, postgres.user())
                .option(ConnectionFactoryOptions.PASSWORD, postgres.password())
                .build())));
    }

    /** A container of the connection fenced by {@code key}, named and labelled as {@code instance}'s child would be. */
    private String plant(String key, String instance) {
        try {
            Process docker = new ProcessBuilder("docker", "run", "-d", "--name", "tether-" + key, "--label", "tether.connection=" + key,
                    "--label", LifecycleGuard.INSTANCE_LABEL + "=" + instance, "--label", "tether.session=s" + instance,
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
