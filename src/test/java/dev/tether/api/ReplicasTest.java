package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import dev.tether.TetherApplication;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresPostgres;

/**
 * Two daemons on one PostgreSQL, as replicas behind a load balancer: each holds the store in memory, and each
 * follows what the other writes (integrations, connections, verdicts, deletions) through the change log.
 */
@InProcess
@RequiresPostgres
class ReplicasTest {

    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final String TOKEN = "replicas-test-token";

    @TempDir
    Path dir;

    private final List<ConfigurableApplicationContext> replicas = new ArrayList<>();

    @AfterEach
    void stopReplicas() {
        replicas.forEach(ConfigurableApplicationContext::close);
    }

    @Test
    void eachReplicaFollowsWhatTheOtherWrites() {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("replicas");
        TetherClient a = start(postgres, schema, dir.resolve("a"));
        TetherClient b = start(postgres, schema, dir.resolve("b"));
        assertThat(b.get("/api/integrations").json().size()).as("b has loaded the empty store: only the built-in").isEqualTo(1);

        String slug = a.register("shared", Fixture.command());
        await().atMost(BOUND).untilAsserted(() -> assertThat(b.get("/api/integrations").json().size()).isEqualTo(2));
        assertThat(b.get("/api/connections/org/" + slug + "/default").status()).isEqualTo(200);

        assertThat(a.post(TetherClient.healthPath(slug, "default"), null).json().path("status").asString()).isEqualTo("healthy");
        await().atMost(BOUND).untilAsserted(() -> assertThat(b.get("/api/connections/org/" + slug + "/default").json()
                .path("lastHealth").path("status").asString()).isEqualTo("healthy"));

        assertThat(a.delete("/api/mcp/servers/" + slug).status()).isEqualTo(200);
        await().atMost(BOUND).untilAsserted(() -> assertThat(b.get("/api/integrations").json().size()).isEqualTo(1));
        assertThat(b.get("/api/connections").json().size()).isZero();
    }

    private TetherClient start(PostgresDatabase postgres, String schema, Path dataDir) {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(TetherApplication.class).run(
                "--server.port=0", "--tether.data-dir=" + dataDir, "--tether.api.token=" + TOKEN,
                "--tether.docker.reap-interval=1h", "--spring.main.banner-mode=off",
                "--tether.store.change-poll=200ms",
                "--spring.r2dbc.url=" + postgres.r2dbcUrl(schema), "--spring.r2dbc.username=" + postgres.user(),
                "--spring.r2dbc.password=" + postgres.password(),
                "--spring.flyway.url=" + postgres.jdbcUrl(schema), "--spring.flyway.user=" + postgres.user(),
                "--spring.flyway.password=" + postgres.password());
        replicas.add(context);
        return new TetherClient(Integer.parseInt(context.getEnvironment().getProperty("local.server.port")), TOKEN);
    }
}
