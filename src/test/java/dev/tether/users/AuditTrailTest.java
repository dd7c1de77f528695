package dev.tether.users;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.IntStream;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.springframework.r2dbc.core.DatabaseClient;

import dev.tether.daemon.TetherProperties;
import dev.tether.docker.InstanceId;
import dev.tether.identity.AuditEvent;
import dev.tether.identity.Principal;
import dev.tether.identity.Role;
import dev.tether.identity.Via;
import dev.tether.store.storage.TestStores;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresPostgres;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The audit trail's table on both stores the daemon runs on: more events than one insert statement takes, some with
 * every optional field and some with none, are read back whole, newest first, each exactly once.
 */
class AuditTrailTest {

    private static final int EVENTS = 250;
    private static final Duration BOUND = Duration.ofSeconds(30);

    @Test
    void everyEventIsReadBackWholeAndNewestFirstFromTheEmbeddedStore() throws Exception {
        String name = "audit-" + UUID.randomUUID();
        Flyway.configure().dataSource("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1", "sa", "").load().migrate();
        ConnectionFactory h2 = ConnectionFactories.get(ConnectionFactoryOptions.parse("r2dbc:h2:mem:///" + name + "?DB_CLOSE_DELAY=-1")
                .mutate().option(ConnectionFactoryOptions.USER, "sa").option(ConnectionFactoryOptions.PASSWORD, "").build());
        readsBackEveryEvent(TestStores.asTheDaemonHasIt(h2));
    }

    @Test
    @RequiresPostgres
    void everyEventIsReadBackWholeAndNewestFirstFromPostgres() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("audit_test");
        try {
            Flyway.configure().dataSource(postgres.jdbcUrl(schema), postgres.user(), postgres.password()).load().migrate();
            readsBackEveryEvent(ConnectionFactories.get(ConnectionFactoryOptions.parse(postgres.r2dbcUrl(schema)).mutate()
                    .option(ConnectionFactoryOptions.USER, postgres.user())
                    .option(ConnectionFactoryOptions.PASSWORD, postgres.password()).build()));
        }
        finally {
            postgres.dropSchema(schema);
        }
    }

    private static void readsBackEveryEvent(ConnectionFactory store) throws Exception {
        Path dataDir = Files.createTempDirectory("tether-audit");
        InstanceId replica = new InstanceId(new TetherProperties(dataDir));
        AuditTrail trail = new AuditTrail(DatabaseClient.create(store), new IdentityProperties(null, null, null, null, null, null, null),
                replica, new SimpleMeterRegistry());
        Principal bob = new Principal("acme", "bob", Role.MEMBER, Via.API_TOKEN, "tok_42", "Bob");
        Instant start = Instant.parse("2026-12-06T01:00:00Z");
        for (int i = 0; i < EVENTS; i++) {
            trail.record(i % 2 == 0
                    ? new AuditEvent(start.plusMillis(i), bob, "request", "POST /mcp/tools " + i, "ok", 200, "detail " + i)
                    : new AuditEvent(start.plusMillis(i), null, "tool.call", "tools.everything.org.default.echo " + i, "error", null, null));
        }

        List<AuditTrail.Stored> read = trail.query(new AuditTrail.Filter(Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), 1000)).collectList().block(BOUND);

        assertThat(read).extracting(AuditTrail.Stored::target).as("every event, newest first, each once")
                .containsExactlyElementsOf(IntStream.iterate(EVENTS - 1, i -> i >= 0, i -> i - 1)
                        .mapToObj(i -> (i % 2 == 0 ? "POST /mcp/tools " : "tools.everything.org.default.echo ") + i).toList());
        assertThat(read.get(1)).as("every field of an event that has all of them")
                .isEqualTo(new AuditTrail.Stored(read.get(1).seq(), start.plusMillis(248), "acme", "bob", "member", "api-token", "tok_42",
                        "request", "POST /mcp/tools 248", "ok", 200, replica.value(), "detail 248"));
        assertThat(read.get(0)).as("an event without a principal, a status or a detail")
                .isEqualTo(new AuditTrail.Stored(read.get(0).seq(), start.plusMillis(249), Principal.DEFAULT_TENANT, "", "-", "-", null,
                        "tool.call", "tools.everything.org.default.echo 249", "error", null, replica.value(), null));
    }
}
