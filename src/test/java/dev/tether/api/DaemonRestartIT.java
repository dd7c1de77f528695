package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresPostgres;

/**
 * What a user stored survives an orderly restart of the packaged daemon, on the embedded H2 store and on
 * PostgreSQL: integrations with their configs, connections with their credentials and last verdicts, and
 * catalogs, which the restarted daemon serves from the store without starting a server. The secrets given
 * to it (a server's env, a remote server's headers, a connection's credential) show in no response and in
 * neither daemon's log, with Tether's own logging at DEBUG; the credential still reaches the server.
 */
class DaemonRestartIT {

    private static final int GENERATED = 7;
    /** The fixture's own five tools, its {@code env} tool and the generated ones. */
    private static final int TOOLS = 5 + 1 + GENERATED;

    @TempDir
    Path dataDir;

    private final String secret = UUID.randomUUID().toString();
    private final List<PackagedDaemon> daemons = new ArrayList<>();
    private final List<String> bodies = new ArrayList<>();

    @AfterEach
    void stopDaemons() throws InterruptedException {
        for (PackagedDaemon daemon : daemons) {
            daemon.close();
        }
    }

    @Test
    void embeddedStoreKeepsEverythingAcrossARestart() throws Exception {
        keepsEverythingAcrossARestart(Map.of());
    }

    @Test
    @RequiresPostgres
    void postgresStoreKeepsEverythingAcrossARestart() throws Exception {
        PostgresDatabase database = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = database.createSchema("restart");
        keepsEverythingAcrossARestart(Map.of(
                "TETHER_STORE_R2DBC_URL", database.r2dbcUrl(schema),
                "SPRING_R2DBC_USERNAME", database.user(), "SPRING_R2DBC_PASSWORD", database.password(),
                "TETHER_STORE_JDBC_URL", database.jdbcUrl(schema),
                "SPRING_FLYWAY_USER", database.user(), "SPRING_FLYWAY_PASSWORD", database.password()));
    }

    private void keepsEverythingAcrossARestart(Map<String, String> store) throws Exception {
        PackagedDaemon first = start(store);
        TetherClient before = new TetherClient(first.port(), first.token());
        String stdio = before.register("restart_stdio", Fixture.command("--tools=" + GENERATED, "--env-tool"),
                Map.of("FIXTURE_SECRET", "env-" + secret));
        ok(before.post("/api/mcp/servers", Map.of("name", "Restart Remote", "endpoint", "http://127.0.0.1:1/mcp",
                "remoteTransport", "sse", "headers", Map.of("X-Key", "header-" + secret), "queryParams", Map.of("tenant", "acme"))));
        ok(before.post("/api/connections", TetherClient.defaultConnection("restart_remote")));
        ok(before.post("/api/connections", Map.of("owner", "user", "name", "alice", "integration", stdio,
                "template", "API_TOKEN", "identityLabel", "alice@example.com", "value", "value-" + secret)));
        assertThat(ok(before.health(stdio)).path("status").asString()).isEqualTo("healthy");
        for (String connection : List.of("org/" + stdio + "/default", "user/" + stdio + "/alice")) {
            assertThat(ok(before.post("/api/connections/" + connection + "/refresh", null)).size()).isEqualTo(TOOLS);
        }
        Map<String, JsonNode> stored = snapshot(before, stdio);

        first.stop();
        PackagedDaemon second = start(store);
        TetherClient after = new TetherClient(second.port(), second.token());

        assertThat(second.token()).as("the token file is kept").isEqualTo(first.token());
        assertThat(snapshot(after, stdio)).as("what the restarted daemon answers").isEqualTo(stored);
        assertThat(after.metrics().spawned()).as("the catalog and the verdicts come from the store").isZero();
        JsonNode digest = ok(after.post("/api/tools/call", Map.of("address", "tools." + stdio + ".user.alice.env",
                "args", Map.of("name", "API_TOKEN"))));
        assertThat(digest.path("content").get(0).path("text").asString()).as("the stored credential reaches the server")
                .isEqualTo("sha256:" + sha256("value-" + secret));

        second.stop();
        for (PackagedDaemon daemon : daemons) {
            assertThat(Files.readString(daemon.log())).as(daemon.log().toString()).doesNotContain(secret)
                    .contains("Started TetherApplication");
        }
        assertThat(bodies).as("responses").isNotEmpty().noneMatch(body -> body.contains(secret));
    }

    /** Every stored thing a client can read, by route. */
    private Map<String, JsonNode> snapshot(TetherClient tether, String stdio) {
        Map<String, JsonNode> answers = new LinkedHashMap<>();
        for (String route : List.of("/api/integrations", "/api/connections", "/api/mcp/servers/" + stdio,
                "/api/mcp/servers/restart_remote", "/api/connections/user/" + stdio + "/alice",
                "/api/tools?integration=" + stdio, "/api/tools/schema?address=tools." + stdio + ".org.default.echo")) {
            answers.put(route, ok(tether.get(route)));
        }
        assertThat(answers.get("/api/integrations").size()).as("the built-in executor and two servers").isEqualTo(3);
        assertThat(answers.get("/api/connections").size()).isEqualTo(3);
        assertThat(answers.get("/api/tools?integration=" + stdio).size()).isEqualTo(2 * TOOLS);
        return answers;
    }

    private PackagedDaemon start(Map<String, String> store) throws IOException, InterruptedException {
        PackagedDaemon daemon = PackagedDaemon.start(PackagedDaemon.jarOrSkip(), dataDir,
                List.of("--logging.level.dev.tether=DEBUG"), store);
        daemons.add(daemon);
        return daemon;
    }

    private JsonNode ok(Reply reply) {
        bodies.add(reply.body());
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply.json();
    }

    private static String sha256(String text) throws NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }
}
