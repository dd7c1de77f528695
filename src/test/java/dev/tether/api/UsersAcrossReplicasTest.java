package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

import dev.tether.TetherApplication;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.Keycloak;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.Replicas;
import dev.tether.testsupport.RequiresKeycloak;
import dev.tether.testsupport.RequiresPostgres;

/**
 * Users across two replicas on one PostgreSQL, with no sticky sessions: a sign-in that begins on one replica ends on the
 * other, and its session works on both; a personal connection made through one is its user's alone on the other too,
 * where its calls run as that user; a token revoked on one stops on the other within {@code token-recheck}.
 */
@InProcess
@RequiresPostgres
@RequiresKeycloak
class UsersAcrossReplicasTest {

    private static final String TOKEN = "users-replicas-token";
    private static final Duration RECHECK = Duration.ofSeconds(1);

    @TempDir
    Path dir;

    private final List<ConfigurableApplicationContext> replicas = new ArrayList<>();

    @AfterEach
    void stop() {
        Replicas.closeAll(replicas);
    }

    @Test
    void aSignInBegunOnOneReplicaEndsOnTheOtherAndUsersStayApartOnBoth() {
        Keycloak keycloak = Keycloak.fromEnvironment().orElseThrow();
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("users");
        // Replicas share the store's key, as they must: the users' refresh tokens and every credential are sealed with it.
        String key = Base64.getEncoder().encodeToString(new byte[32]);
        int a = start(postgres, schema, dir.resolve("a"), keycloak, key);
        int b = start(postgres, schema, dir.resolve("b"), keycloak, key);

        String session = keycloak.signIn(a, b, "alice");
        keycloak.signIn(b, a, "bob");
        for (int port : List.of(a, b)) {
            JsonNode me = UsersWalk.ok(new ApiClient(port, null, Map.of("Cookie", "tether_session=" + session)).get("/api/auth/me")).json();
            assertThat(me.path("via").asString()).isEqualTo("session");
        }

        String alice = keycloak.accessToken("alice");
        String bob = keycloak.accessToken("bob");
        List<String> command = Fixture.command("--env-tool");
        UsersWalk.ok(new ApiClient(a, keycloak.accessToken("admin")).post("/api/mcp/servers", Map.of("transport", "stdio", "name", "Walk",
                "slug", "walk", "command", command.get(0), "args", command.subList(1, command.size()))));
        UsersWalk.ok(new ApiClient(a, alice).post("/api/connections", Map.of("owner", "user", "name", "mine", "integration", "walk",
                "template", "none", "values", Map.of("WALK_SECRET", "alices-secret"))));
        Await.until(() -> new ApiClient(b, alice).get("/api/connections/user/walk/mine").status() == 200, Duration.ofSeconds(30),
                () -> "b learns of alice's connection");
        assertThat(new ApiClient(b, bob).get("/api/connections/user/walk/mine").status()).isEqualTo(404);
        JsonNode called = UsersWalk.ok(new ApiClient(b, alice).post("/api/tools/call", Map.of("address", "tools.walk.user.mine.env",
                "args", Map.of("name", "WALK_SECRET")))).json();
        assertThat(called.toString()).contains(UsersWalk.sha256("alices-secret"));
        assertThat(new ApiClient(b, bob).post("/api/tools/call", Map.of("address", "tools.walk.user.mine.env", "args",
                Map.of("name", "WALK_SECRET"))).status()).isEqualTo(404);

        JsonNode issued = UsersWalk.ok(new ApiClient(a, alice).post("/api/tokens", Map.of("name", "cli"))).json();
        ApiClient cliOnA = new ApiClient(a, issued.path("token").asString());
        assertThat(cliOnA.get("/api/connections").status()).isEqualTo(200);
        UsersWalk.ok(new ApiClient(b, alice).delete("/api/tokens/" + issued.path("tokenInfo").path("id").asString()));
        long revoked = System.nanoTime();
        Await.until(() -> cliOnA.get("/api/connections").status() == 401, Duration.ofSeconds(30),
                () -> "the replica that did not revoke it refuses it too");
        System.out.println("a token revoked on b was refused on a after " + (System.nanoTime() - revoked) / 1_000_000 + " ms (token-recheck "
                + RECHECK.toMillis() + " ms)");
    }

    private int start(PostgresDatabase postgres, String schema, Path dataDir, Keycloak keycloak, String key) {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(TetherApplication.class).run(
                "--server.port=0", "--tether.data-dir=" + dataDir, "--tether.api.token=" + TOKEN,
                "--tether.docker.reap-interval=1h", "--spring.main.banner-mode=off",
                "--tether.store.change-poll=200ms", "--tether.replicas.address=127.0.0.1",
                "--tether.replicas.heartbeat=500ms", "--tether.replicas.lease-ttl=5s", "--tether.store.secret-key=" + key,
                "--spring.r2dbc.url=" + postgres.r2dbcUrl(schema), "--spring.r2dbc.username=" + postgres.user(),
                "--spring.r2dbc.password=" + postgres.password(),
                "--spring.flyway.url=" + postgres.jdbcUrl(schema), "--spring.flyway.user=" + postgres.user(),
                "--spring.flyway.password=" + postgres.password(),
                "--tether.identity.mode=oidc", "--tether.identity.oidc.issuer=" + keycloak.issuer(),
                "--tether.identity.oidc.client-id=" + Keycloak.CLIENT, "--tether.identity.oidc.client-secret=" + Keycloak.CLIENT_SECRET,
                "--tether.identity.token-recheck=" + RECHECK.toMillis() + "ms");
        replicas.add(context);
        return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    }
}
