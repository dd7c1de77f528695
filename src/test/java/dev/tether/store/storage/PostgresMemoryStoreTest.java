package dev.tether.store.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import dev.tether.store.StoreProperties;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresPostgres;

/**
 * The store held in memory over one real PostgreSQL, shared by the test's replicas as in a scaled deployment; there,
 * a replica hears of another's write by {@code LISTEN/NOTIFY} instead of polling the change log.
 */
@RequiresPostgres
class PostgresMemoryStoreTest extends MemoryStoreContract {

    private final PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();

    @Override
    protected Database newDatabase() {
        String schema = postgres.createSchema("memory_test");
        return new Database(postgres.jdbcUrl(schema), postgres.r2dbcUrl(schema), postgres.user(), postgres.password());
    }

    @Override
    protected boolean announces() {
        return true;
    }

    @Test
    void aReplicaHearsOfAnothersWriteWithoutPolling() {
        Database database = migrated();
        Replica a = replica(database);
        Replica b = replica(database);
        assertThat(b.memory().all().collectList().block(BOUND)).isEmpty();

        // The replicas' clock stands still: no poll ever runs, only the announcement can tell b.
        a.memory().create(stdio("heard", 1)).block(BOUND);

        Await.until(() -> b.memory().all().any(integration -> integration.slug().equals("heard")).block(BOUND), BOUND,
                () -> "b hears of a's write");
        assertThat(b.memory().find("heard").block(BOUND)).isEqualTo(stdio("heard", 1));
    }

    @Test
    void aReplicaWhoseListeningConnectionIsLostListensAgainAndCatchesUp() throws SQLException {
        Database database = migrated();
        String name = "tether-b-" + UUID.randomUUID().toString().substring(0, 8);
        Replica a = replica(database);
        Replica b = replica(new Database(database.jdbcUrl(), database.r2dbcUrl() + "&applicationName=" + name, database.user(),
                database.password()));
        Await.until(() -> listeners(name) == 1, BOUND, () -> "b listens");

        try (Connection admin = DriverManager.getConnection(database.jdbcUrl(), database.user(), database.password());
                Statement statement = admin.createStatement()) {
            statement.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '" + name
                    + "' AND query LIKE 'LISTEN %'");
        }
        Await.until(() -> listeners(name) == 0, BOUND, () -> "b's listening connection is gone");
        a.memory().create(stdio("missed", 1)).block(BOUND);

        // b listens again after its pause (virtual time), then reads what it missed.
        Await.until(() -> {
            clock.advanceTimeBy(StoreProperties.defaults().changePoll().multipliedBy(2));
            // all(), not find(): a miss of find() asks the database, all() is what b has read
            return b.memory().all().any(integration -> integration.slug().equals("missed")).block(BOUND);
        }, BOUND, () -> "b listens again and catches up");
        assertThat(listeners(name)).isEqualTo(1);
    }

    /** Connections of the replica named {@code name} that listen for announcements. */
    private long listeners(String name) {
        try (Connection admin = DriverManager.getConnection(postgres.jdbcUrl("public"), postgres.user(), postgres.password());
                Statement statement = admin.createStatement();
                var rows = statement.executeQuery("SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = '" + name
                        + "' AND query LIKE 'LISTEN %'")) {
            rows.next();
            return rows.getLong(1);
        }
        catch (SQLException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
