package dev.tether.store.storage;

import dev.tether.identity.Audit;
import dev.tether.identity.Principal;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;
import dev.tether.store.Integration;
import dev.tether.store.Owner;
import dev.tether.store.Policy;
import dev.tether.store.PolicyAction;
import dev.tether.store.StdioConfig;
import dev.tether.store.StoreProperties;
import dev.tether.store.StoredCatalog;
import dev.tether.store.StoredTool;
import dev.tether.store.changes.StoreChanges;
import dev.tether.store.changes.TestChanges;
import dev.tether.store.secrets.SecretBox;
import dev.tether.store.secrets.TestSecrets;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import org.flywaydb.core.Flyway;
import org.awaitility.core.ThrowingRunnable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.test.scheduler.VirtualTimeScheduler;
import tools.jackson.databind.json.JsonMapper;

/**
 * The store held in memory, on each real database: verdicts written behind (coalesced, flushed on stop) and two
 * replicas on one database following each other's writes through the change log.
 */
abstract class MemoryStoreContract {

    /** One key for every replica of a test, as replicas sharing a database share their key. */
    private static final SecretBox SECRETS = TestSecrets.random();

    protected static final Duration BOUND = Duration.ofSeconds(20);

    /** Where a test's database is; {@code jdbcUrl} migrates it, {@code r2dbcUrl} is what the stores use. */
    protected record Database(String jdbcUrl, String r2dbcUrl, String user, String password) {
    }

    protected abstract Database newDatabase();

    /** Whether the store announces each change (PostgreSQL), so that a replica may hear of one before it polls. */
    protected boolean announces() {
        return false;
    }

    protected final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

    @AfterEach
    void stopClock() {
        clock.dispose();
    }

    /** One replica: the database under it, and the store as the rest of Tether sees it. */
    protected record Replica(R2dbcStore database, R2dbcPolicies policyTable, MemoryStore memory, CachedPolicies policies,
            StoreUpkeep upkeep, DatabaseClient db) {
    }

    protected Replica replica(Database database) {
        ConnectionFactory factory = TestStores.asTheDaemonHasIt(ConnectionFactories.get(ConnectionFactoryOptions.parse(database.r2dbcUrl()).mutate()
                .option(ConnectionFactoryOptions.USER, database.user())
                .option(ConnectionFactoryOptions.PASSWORD, database.password())
                .build()));
        DatabaseClient db = DatabaseClient.create(factory);
        R2dbcStore store = new R2dbcStore(db, new R2dbcTransactionManager(factory), JsonMapper.builder().build(), SECRETS);
        TestChanges.Log log = TestChanges.of(db);
        StoreChanges changes = log.changes();
        R2dbcPolicies policyTable = new R2dbcPolicies(db);
        OwnerScope scope = new OwnerScope(Audit.NONE);
        CachedPolicies policies = new CachedPolicies(policyTable, scope, changes);
        MemoryStore memory = new MemoryStore(store, scope, policies, changes);
        StoreUpkeep upkeep = new StoreUpkeep(memory, changes, log.signals(), log.position(),
                StoreProperties.defaults(), clock);
        upkeep.start();
        return new Replica(store, policyTable, memory, policies, upkeep, db);
    }

    protected Database migrated() {
        Database database = newDatabase();
        Flyway.configure().dataSource(database.jdbcUrl(), database.user(), database.password()).load().migrate();
        return database;
    }

    protected static Integration stdio(String slug, long changedAt) {
        return new Integration(slug, "Server " + slug, "a server", new StdioConfig("node", List.of("server.js"), Map.of(), null),
                Instant.ofEpochMilli(changedAt));
    }

    private static Connection connection(ConnectionKey key) {
        return new Connection(key, "none", Optional.empty(), Optional.empty());
    }

    @Test
    void aVerdictIsInMemoryAtOnceAndInTheDatabaseWithinTheWriteBehindNewestOnly() {
        Replica replica = replica(migrated());
        ConnectionKey key = ConnectionKey.org("alpha", "default");
        replica.memory().create(stdio("alpha", 1)).then(replica.memory().create(connection(key), Map.of())).block(BOUND);

        replica.memory().saveHealth(key, HealthVerdict.degraded(1, "first")).block(BOUND);
        replica.memory().saveHealth(key, HealthVerdict.healthy(2)).block(BOUND);

        assertThat(replica.memory().find(key).block(BOUND).lastHealth()).contains(HealthVerdict.healthy(2));
        assertThat(replica.database().find(key).block(BOUND).lastHealth()).as("not written yet").isEmpty();

        clock.advanceTimeBy(StoreProperties.defaults().writeBehind());
        // The write itself is I/O that started at that tick: wait for it, not for time.
        await().atMost(BOUND).untilAsserted(() -> {
            assertThat(replica.database().find(key).block(BOUND).lastHealth()).contains(HealthVerdict.healthy(2));
            assertThat(verdictWrites(replica, key)).as("the create, then one write for both verdicts").isEqualTo(2);
        });
    }

    @Test
    void aGracefulStopWritesEveryPendingVerdict() throws InterruptedException {
        Database database = migrated();
        Replica replica = replica(database);
        ConnectionKey one = ConnectionKey.org("alpha", "one");
        ConnectionKey two = ConnectionKey.user(Principal.LOCAL_SUBJECT, "alpha", "two");
        replica.memory().create(stdio("alpha", 1)).then(replica.memory().create(connection(one), Map.of())).block(BOUND);
        replica.memory().create(connection(two), Map.of()).block(BOUND);
        replica.memory().saveHealth(one, HealthVerdict.healthy(5)).block(BOUND);
        replica.memory().saveHealth(two, HealthVerdict.degraded(6, "down")).block(BOUND);

        CountDownLatch stopped = new CountDownLatch(1);
        replica.upkeep().stop(stopped::countDown);

        assertThat(stopped.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(replica.database().find(one).block(BOUND).lastHealth()).contains(HealthVerdict.healthy(5));
        assertThat(replica.database().find(two).block(BOUND).lastHealth()).contains(HealthVerdict.degraded(6, "down"));
    }

    @Test
    void aReplicaFollowsWhatAnotherOneWrites() {
        Database database = migrated();
        Replica a = replica(database);
        Replica b = replica(database);
        ConnectionKey key = ConnectionKey.org("shared", "default");
        assertThat(b.memory().all().collectList().block(BOUND)).isEmpty(); // b has loaded, before a writes

        a.memory().create(stdio("shared", 1)).then(a.memory().create(connection(key), Map.of())).block(BOUND);
        // Before b has read the change log (without announcements its clock stands still: it never polls), what a
        // wrote is found all the same: a miss asks the database.
        assertThat(b.memory().find("shared").block(BOUND)).as("a's server, found through b at once").isEqualTo(stdio("shared", 1));
        assertThat(b.memory().find(key).block(BOUND)).as("a's connection, found through b at once").isNotNull();
        if (!announces()) {
            assertThat(b.memory().all().collectList().block(BOUND)).as("b has not read the change log yet").isEmpty();
        }
        polled(() -> {
            assertThat(b.memory().find("shared").block(BOUND)).isEqualTo(stdio("shared", 1));
            assertThat(b.memory().find(key).block(BOUND)).isNotNull();
        });

        a.memory().update(stdio("shared", 2)).block(BOUND);
        StoredTool tool = new StoredTool("echo", "echo", "Echoes", false, Map.of("type", "object"), null);
        b.memory().catalog(key).block(BOUND); // b remembers there is no catalog
        a.memory().saveCatalog(key, new StoredCatalog(List.of(tool), Instant.ofEpochMilli(9))).block(BOUND);
        a.memory().saveHealth(key, HealthVerdict.healthy(10)).block(BOUND);
        polled(() -> {
            assertThat(b.memory().find("shared").block(BOUND).configChangedAt()).isEqualTo(Instant.ofEpochMilli(2));
            assertThat(b.memory().tool(key, "echo").block(BOUND)).isEqualTo(tool);
            assertThat(b.memory().find(key).block(BOUND).lastHealth()).contains(HealthVerdict.healthy(10));
        });

        a.memory().delete(key).block(BOUND);
        polled(() -> {
            assertThat(b.memory().find(key).block(BOUND)).isNull();
            assertThat(b.memory().catalog(key).block(BOUND)).isNull();
        });

        a.memory().delete("shared").block(BOUND);
        polled(() -> assertThat(b.memory().find("shared").block(BOUND)).isNull());
    }

    @Test
    void aVerdictAnotherReplicaReachedIsPassedOnOnceReadAndOnlyThat() {
        Database database = migrated();
        Replica a = replica(database);
        Replica b = replica(database);
        ConnectionKey key = ConnectionKey.org("watched", "default");
        a.memory().create(stdio("watched", 1)).then(a.memory().create(connection(key), Map.of())).block(BOUND);
        polled(() -> assertThat(b.memory().all(Optional.empty(), Optional.empty()).map(Connection::key).collectList().block(BOUND))
                .contains(key));
        List<Optional<HealthVerdict>> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        reactor.core.Disposable listening = b.memory().verdictsOfPeers().subscribe(connection -> heard.add(connection.lastHealth()));
        try {
            a.memory().saveHealth(key, HealthVerdict.degraded(10, "down")).block(BOUND);
            polled(() -> assertThat(heard).containsExactly(Optional.of(HealthVerdict.degraded(10, "down"))));

            // b's own verdict, and a's label change that leaves the verdict as it was, are no peer's verdicts.
            b.memory().saveHealth(key, HealthVerdict.healthy(11)).block(BOUND);
            a.memory().update(connection(key), Optional.empty()).block(BOUND);
            polled(() -> assertThat(a.memory().find(key).block(BOUND).lastHealth()).contains(HealthVerdict.healthy(11)));
            assertThat(heard).hasSize(1);
        }
        finally {
            listening.dispose();
        }
    }

    @Test
    void policiesAreReadOnceAndAgainAfterAChangeThroughAnyReplica() {
        Database database = migrated();
        Replica a = replica(database);
        Replica b = replica(database);
        a.policies().create(policy("first")).block(BOUND);
        // b has heard of that change before it reads (a write after it has reached b), so that what b then reads
        // stays in its memory: on a store that announces changes, the announcement could otherwise come after the read.
        a.memory().create(stdio("marker", 1)).block(BOUND);
        // all(), not find(): a miss of find() asks the database, all() is what b has read from the change log
        polled(() -> assertThat(b.memory().all().map(Integration::slug).collectList().block(BOUND)).contains("marker"));
        assertThat(policyIds(b)).as("b reads them from the database").containsExactly("first");

        // Past both replicas, straight into the database: b goes on answering from memory.
        b.policyTable().create(policy("second")).block(BOUND);
        assertThat(policyIds(b)).as("b answers from memory").containsExactly("first");

        // A change through a replica: its writer sees it at once, the other one after its next look.
        a.policies().delete(Owner.ORG, "", "first").block(BOUND);
        assertThat(policyIds(a)).containsExactly("second");
        polled(() -> assertThat(policyIds(b)).containsExactly("second"));
        assertThat(b.policies().find(Owner.ORG, "", "second").block(BOUND)).isEqualTo(policy("second"));
    }

    @Test
    void aChangeThatTheLoadHasReadIsNotAppliedAgainAtTheNextLook() {
        Database database = migrated();
        Replica a = replica(database);
        a.policies().create(policy("first")).block(BOUND);
        // b starts, and loads the whole store, after the change was recorded: the load itself reads what it announces
        Replica b = replica(database);
        b.memory().loaded().block(BOUND);
        assertThat(policyIds(b)).containsExactly("first");

        b.policyTable().create(policy("second")).block(BOUND);
        b.memory().catchUp().block(BOUND);
        assertThat(policyIds(b)).as("the look-back did not hand b the change its load had read, as if new").containsExactly("first");
    }

    private static Policy policy(String id) {
        return new Policy(id, Owner.ORG, "", "tools." + id + ".*", PolicyAction.BLOCK, "a" + id, Instant.ofEpochMilli(1),
                Instant.ofEpochMilli(1));
    }

    private static List<String> policyIds(Replica replica) {
        return replica.policies().policies().map(Policy::id).collectList().block(BOUND);
    }

    /** Lets the replicas' timers tick (virtual time) until {@code assertion} holds; the reloads themselves are I/O. */
    private void polled(ThrowingRunnable assertion) {
        await().atMost(BOUND).untilAsserted(() -> {
            clock.advanceTimeBy(StoreProperties.defaults().changePoll());
            assertion.run();
        });
    }

    private static long verdictWrites(Replica replica, ConnectionKey key) {
        return replica.db().sql("SELECT COUNT(*) AS n FROM store_change WHERE kind = 'connection' AND item = :item")
                .bind("item", MemoryStore.itemOf(key))
                .map(row -> row.get("n", Long.class))
                .one()
                .block(BOUND);
    }
}
