package dev.tether.store.storage;

import java.util.UUID;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import org.flywaydb.core.Flyway;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.identity.Audit;
import dev.tether.store.CatalogStore;
import dev.tether.store.ConnectionStore;
import dev.tether.store.CredentialStore;
import dev.tether.store.IntegrationStore;
import dev.tether.store.PolicyStore;
import dev.tether.store.changes.StoreChanges;
import dev.tether.store.changes.TestChanges;
import dev.tether.store.secrets.TestSecrets;

/**
 * The real store (held in memory, written through to an embedded H2 database of its own), for tests that wire
 * services by hand: one instance behind every store interface, as Spring wires it.
 */
public final class TestStores {

    /** The views of one store. */
    public record Stores(IntegrationStore integrations, ConnectionStore connections, CredentialStore credentials,
            CatalogStore catalogs, PolicyStore policies) {
    }

    private TestStores() {
    }

    /** A migrated, empty H2 database in memory, alive until the JVM ends, on the store's own threads as in the daemon. */
    public static Stores embedded() {
        return embedded(true);
    }

    /**
     * The same store with every statement on the thread that asks, for tests in virtual time: a hop to the store's
     * own threads would let virtual time move on before a read came back.
     */
    public static Stores embeddedOnTheCallersThread() {
        return embedded(false);
    }

    private static Stores embedded(boolean ownThreads) {
        String name = "test-" + UUID.randomUUID();
        Flyway.configure().dataSource("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1", "sa", "").load().migrate();
        ConnectionFactory h2 = ConnectionFactories.get(ConnectionFactoryOptions.parse("r2dbc:h2:mem:///" + name + "?DB_CLOSE_DELAY=-1")
                .mutate().option(ConnectionFactoryOptions.USER, "sa").option(ConnectionFactoryOptions.PASSWORD, "").build());
        ConnectionFactory factory = ownThreads ? asTheDaemonHasIt(h2) : h2;
        DatabaseClient db = DatabaseClient.create(factory);
        R2dbcStore database = new R2dbcStore(db, new R2dbcTransactionManager(factory), JsonMapper.builder().build(),
                TestSecrets.random());
        // No upkeep: one replica reads everything from memory, and started timers would keep polling and
        // flushing after the test that made them has ended.
        StoreChanges changes = TestChanges.of(db).changes();
        OwnerScope scope = new OwnerScope(Audit.NONE);
        CachedPolicies policies = new CachedPolicies(new R2dbcPolicies(db), scope, changes);
        MemoryStore store = new MemoryStore(database, scope, policies, changes);
        return new Stores(store, store, store, store, policies);
    }

    /**
     * {@code factory} as the daemon has it: an H2 database pooled (Spring Boot's default) and on the store's own
     * threads, two layers whose meeting once let two callers share a connection. PostgreSQL's as it is: its driver
     * needs neither, and a pool per test database would hold connections the server counts against its limit.
     */
    public static ConnectionFactory asTheDaemonHasIt(ConnectionFactory factory) {
        if (!"H2".equals(factory.getMetadata().getName())) {
            return factory;
        }
        return EmbeddedStoreThreads.onOwnThreads(new ConnectionPool(ConnectionPoolConfiguration.builder(factory).build()));
    }
}
