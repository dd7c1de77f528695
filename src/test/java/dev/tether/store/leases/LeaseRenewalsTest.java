package dev.tether.store.leases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.Option;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.Disposable;

import dev.tether.store.leases.InstanceLeases.Lease;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresPostgres;

/**
 * A replica's own lease is written on a connection of its own, outside the pool every other statement waits for: with
 * every pooled connection busy (a storm's statements), a renewal is still written, and one whose connection the
 * server dropped fails once and opens another for the next.
 */
@RequiresPostgres
class LeaseRenewalsTest {

    private static final Duration BOUND = Duration.ofSeconds(30);

    private PostgresDatabase postgres;
    private String schema;
    private ConnectionPool pool;
    private R2dbcInstanceLeases leases;
    private final String marker = "lease-renewals-" + UUID.randomUUID();
    private final List<Disposable> busy = new java.util.ArrayList<>();

    @BeforeEach
    void setUp() {
        postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        schema = postgres.createSchema("renewals");
        Flyway.configure().dataSource(postgres.jdbcUrl(schema), postgres.user(), postgres.password()).load().migrate();
        pool = new ConnectionPool(ConnectionPoolConfiguration.builder(ConnectionFactories.get(ConnectionFactoryOptions
                        .parse(postgres.r2dbcUrl(schema)).mutate()
                        .option(ConnectionFactoryOptions.USER, postgres.user())
                        .option(ConnectionFactoryOptions.PASSWORD, postgres.password())
                        // So that this test finds its own sessions among the server's, and ends no other's.
                        .option(Option.valueOf("applicationName"), marker)
                        .build()))
                .initialSize(0).maxSize(2).build());
        leases = new R2dbcInstanceLeases(DatabaseClient.create(pool), pool);
    }

    @AfterEach
    void tearDown() throws SQLException {
        busy.forEach(Disposable::dispose);
        terminate("SELECT pg_sleep(60) -- " + marker);
        leases.destroy();
        // the busy connections were ended by the server just above: closing them may fail, with nothing left to close
        pool.disposeLater().onErrorComplete().block(BOUND);
    }

    @Test
    void aRenewalIsWrittenWhileEveryPooledConnectionIsBusy() throws SQLException {
        DatabaseClient db = DatabaseClient.create(pool);
        AtomicBoolean stormOver = new AtomicBoolean();
        for (int i = 0; i < 2; i++) {
            busy.add(db.sql("SELECT pg_sleep(60) -- " + marker).fetch().rowsUpdated()
                    .doOnTerminate(() -> stormOver.set(true)).subscribe(done -> { }, error -> { }));
        }
        Await.until(() -> running("SELECT pg_sleep(60) -- " + marker) == 2, BOUND, () -> "both pooled connections are busy");
        Instant now = Instant.now();

        assertThat(leases.renew(new Lease("busy0001", "10.0.0.1:4788", now, now.plusSeconds(15))).block(BOUND))
                .as("written anew").isFalse();
        assertThat(leases.extend(new Lease("busy0001", "10.0.0.1:4788", now, now.plusSeconds(30))).block(BOUND)).isTrue();
        leases.drain("busy0001").block(BOUND);

        assertThat(stormOver).as("the pooled statements, still running: the lease did not wait for them").isFalse();
        try (Connection jdbc = jdbc(); ResultSet row = jdbc.createStatement().executeQuery(
                "SELECT expires_at, draining FROM instance_lease WHERE instance_id = 'busy0001'")) {
            assertThat(row.next()).isTrue();
            assertThat(row.getLong(1)).isEqualTo(now.plusSeconds(30).toEpochMilli());
            assertThat(row.getBoolean(2)).isTrue();
        }
    }

    @Test
    void aRenewalWhoseConnectionWasDroppedFailsOnceAndTheNextOpensAnother() throws SQLException {
        Instant now = Instant.now();
        Lease lease = new Lease("drop0001", "10.0.0.1:4788", now, now.plusSeconds(15));
        leases.renew(lease).block(BOUND);
        assertThat(terminate("%instance_lease%")).as("the lease's own connection, dropped by the server").isOne();

        assertThatThrownBy(() -> leases.extend(lease).block(BOUND)).as("on the dropped connection");
        assertThat(leases.extend(lease).block(BOUND)).as("on a new one").isTrue();
    }

    private int running(String query) {
        try (Connection jdbc = jdbc(); ResultSet count = jdbc.createStatement().executeQuery(
                "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND application_name = '" + marker
                        + "' AND query = '" + query + "'")) {
            count.next();
            return count.getInt(1);
        }
        catch (SQLException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Ends the server's sessions whose last statement was {@code query} (a LIKE pattern); how many. */
    private int terminate(String query) throws SQLException {
        try (Connection jdbc = jdbc(); ResultSet ended = jdbc.createStatement().executeQuery(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '" + marker
                        + "' AND query LIKE '" + query + "'")) {
            ended.next();
            return ended.getInt(1);
        }
    }

    private Connection jdbc() throws SQLException {
        return DriverManager.getConnection(postgres.jdbcUrl(schema), postgres.user(), postgres.password());
    }
}
