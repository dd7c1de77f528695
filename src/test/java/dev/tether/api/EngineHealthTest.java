package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import dev.tether.TetherApplication;
import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.HoldingProxy;
import dev.tether.testsupport.HoldingProxy.Hold;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresPostgres;

/**
 * {@code /api/health} and Actuator's liveness tell the truth about the store: a daemon on PostgreSQL whose database
 * stops answering (a proxy between them holds every byte, as a partition does) is reported unhealthy by both, naming
 * the store, and healthy again once the database answers.
 */
@InProcess
@RequiresPostgres
class EngineHealthTest {

    private static final String TOKEN = "engine-health-test-token";
    /** The probe's bound (3 s) plus the verdict's keeping (1 s) plus slack for a busy host. */
    private static final Duration BOUND = Duration.ofSeconds(10);

    @TempDir
    Path dataDir;

    private ConfigurableApplicationContext daemon;
    private HoldingProxy proxy;

    @AfterEach
    void stop() throws Exception {
        if (proxy != null) {
            proxy.release();
        }
        if (daemon != null) {
            daemon.close();
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    @Test
    void aStoreThatDoesNotAnswerMakesTheDaemonUnhealthyUntilItAnswersAgain() {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("engine_health");
        String[] hostPort = postgres.hostPortDatabase().split("/")[0].split(":");
        String database = postgres.hostPortDatabase().split("/")[1];
        proxy = HoldingProxy.tcp(hostPort[0], Integer.parseInt(hostPort[1]), Hold.BYTES);
        // The store's connections go through the proxy; Flyway's, at start only, straight to the database.
        daemon = new SpringApplicationBuilder(TetherApplication.class).run(
                "--server.port=0", "--tether.data-dir=" + dataDir, "--tether.api.token=" + TOKEN,
                "--spring.main.banner-mode=off", "--tether.discovery.enabled=false",
                "--spring.r2dbc.url=r2dbc:postgresql://127.0.0.1:" + proxy.port() + "/" + database + "?schema=" + schema,
                "--spring.r2dbc.username=" + postgres.user(), "--spring.r2dbc.password=" + postgres.password(),
                "--spring.flyway.url=" + postgres.jdbcUrl(schema), "--spring.flyway.user=" + postgres.user(),
                "--spring.flyway.password=" + postgres.password());
        TetherClient tether = new TetherClient(Integer.parseInt(daemon.getEnvironment().getProperty("local.server.port")), TOKEN);
        assertThat(tether.get("/api/health").body()).isEqualTo("ok");
        assertThat(tether.get("/actuator/health/liveness").json().path("status").asString()).isEqualTo("UP");

        proxy.hold();
        long frozen = System.nanoTime();
        Await.until(() -> tether.get("/api/health").status() == 503, BOUND, () -> "/api/health while the store is frozen: "
                + tether.get("/api/health"));
        Duration noticed = Duration.ofNanos(System.nanoTime() - frozen);
        Reply health = tether.get("/api/health");
        assertThat(health.body()).as("names the store").startsWith("unhealthy: ").contains("store: no answer within 3 s");
        Reply liveness = tether.get("/actuator/health/liveness");
        assertThat(liveness.status()).as(liveness.toString()).isEqualTo(503);
        assertThat(liveness.json().path("status").asString()).isEqualTo("DOWN");

        proxy.release();
        long thawed = System.nanoTime();
        Await.until(() -> tether.get("/api/health").status() == 200, BOUND, () -> "/api/health once the store answers: "
                + tether.get("/api/health"));
        Duration recovered = Duration.ofNanos(System.nanoTime() - thawed);
        assertThat(tether.get("/api/health").body()).isEqualTo("ok");
        assertThat(tether.get("/actuator/health/liveness").json().path("status").asString()).isEqualTo("UP");
        System.out.printf("%n[engine health] unhealthy %d ms after the store froze, healthy %d ms after it thawed%n",
                noticed.toMillis(), recovered.toMillis());
    }
}
