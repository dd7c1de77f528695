package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

import dev.tether.TetherApplication;
import dev.tether.api.ApiClient.Reply;
import dev.tether.api.UsersWalk.Answer;
import dev.tether.api.UsersWalk.Caller;
import dev.tether.api.UsersWalk.World;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.Keycloak;
import dev.tether.testsupport.RequiresKeycloak;

/**
 * A shared gateway in {@code oidc} mode against a real Keycloak (realm {@code tether}: admin, alice and bob, and val a
 * viewer). Everyone signs in through the web UI as a browser does; agents and the CLI present Keycloak's JWTs or personal
 * API tokens. Bob walks every route, {@code /mcp} and {@code /mcp/tools} aimed at alice's rows and learns nothing of
 * them; the trail holds every call with his Keycloak subject and no secret; {@code /mcp} points refused agents at its
 * RFC 9728 metadata; a viewer changes nothing; a revoked token stops at once, and alice, disabled in Keycloak, loses every
 * way in within the bound {@code docs/security.md} states, long before her JWT expires.
 */
@InProcess
@RequiresKeycloak
@ExtendWith(OutputCaptureExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class UsersOidcTest {

    private static final String OPERATOR_TOKEN = "users-oidc-operator-token";
    /** How often Keycloak is asked about each signed-in user, and how long a replica trusts what it read of one. */
    private static final Duration REVALIDATE = Duration.ofSeconds(2);
    private static final Duration RECHECK = Duration.ofSeconds(1);

    @TempDir
    static Path dataDir;

    private static Keycloak keycloak;
    private static ConfigurableApplicationContext daemon;
    private static int port;
    private static UsersWalk walk;
    private static Map<String, String> sessions;
    private static Map<String, String> jwts;
    private static World world;

    @BeforeAll
    static void start() throws Exception {
        keycloak = Keycloak.fromEnvironment().orElseThrow();
        keycloak.enabled("alice", true); // a run before may have left her disabled
        daemon = new SpringApplicationBuilder(TetherApplication.class).run("--server.port=0", "--tether.data-dir=" + dataDir,
                "--tether.docker.reap-interval=1h", "--spring.main.banner-mode=off", "--tether.api.token=" + OPERATOR_TOKEN,
                "--tether.identity.mode=oidc", "--tether.identity.oidc.issuer=" + keycloak.issuer(),
                "--tether.identity.oidc.client-id=" + Keycloak.CLIENT, "--tether.identity.oidc.client-secret=" + Keycloak.CLIENT_SECRET,
                "--tether.identity.oidc.revalidate=" + REVALIDATE.toMillis() + "ms",
                "--tether.identity.token-recheck=" + RECHECK.toMillis() + "ms");
        port = Integer.parseInt(daemon.getEnvironment().getProperty("local.server.port"));
        walk = new UsersWalk(port);
        sessions = new TreeMap<>();
        jwts = new TreeMap<>();
        for (String user : List.of("admin", "alice", "bob", "val")) {
            sessions.put(user, keycloak.signIn(port, user));
            jwts.put(user, keycloak.accessToken(user));
        }
        world = walk.build(new Caller("admin", port, jwts.get("admin")), new Caller("alice", port, jwts.get("alice")));
    }

    @AfterAll
    static void stop() {
        if (daemon != null) {
            daemon.close();
        }
        if (keycloak != null) {
            keycloak.enabled("alice", true);
        }
    }

    @Test
    @Order(1)
    void everyoneIsWhoKeycloakSaysAtTheRoleKeycloakGives() {
        Map<String, String> roles = Map.of("admin", "admin", "alice", "member", "bob", "member", "val", "viewer");
        for (String user : roles.keySet()) {
            JsonNode bySession = UsersWalk.ok(cookie(sessions.get(user)).get("/api/auth/me")).json();
            JsonNode byJwt = UsersWalk.ok(new ApiClient(port, jwts.get(user)).get("/api/auth/me")).json();
            assertThat(bySession.path("subject").asString()).isEqualTo(subject(user)).isEqualTo(byJwt.path("subject").asString());
            assertThat(bySession.path("role").asString()).as(user).isEqualTo(roles.get(user));
            assertThat(byJwt.path("role").asString()).as(user).isEqualTo(roles.get(user));
            assertThat(bySession.path("via").asString()).isEqualTo("session");
            assertThat(byJwt.path("via").asString()).isEqualTo("jwt");
        }
        assertThat(new ApiClient(port, null).get("/api/auth/me").status()).isEqualTo(401);
        String forged = jwts.get("bob").substring(0, jwts.get("bob").lastIndexOf('.') + 1) + "c2lnbmF0dXJl";
        assertThat(new ApiClient(port, forged).get("/api/connections").status()).as("a JWT with a forged signature").isEqualTo(401);
        String idToken = keycloak.tokens("bob").path("id_token").asString();
        assertThat(new ApiClient(port, idToken).get("/api/connections").status()).as("an ID token is not for Tether's audience")
                .isEqualTo(401);
        JsonNode users = UsersWalk.ok(new ApiClient(port, jwts.get("admin")).get("/api/users")).json();
        assertThat(users.size()).isEqualTo(4);
        assertThat(users.toString()).doesNotContain("refresh");
        assertThat(new ApiClient(port, jwts.get("bob")).get("/api/users").status()).isEqualTo(403);
    }

    @Test
    @Order(2)
    void theWebUiSendsABrowserToSignInAndAnAgentToTheProtectedResourceMetadata() throws Exception {
        HttpClient browser = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
        HttpResponse<String> page = browser.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/integrations"))
                .header("Accept", "text/html").GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(page.statusCode()).isEqualTo(302);
        assertThat(page.headers().firstValue("location")).hasValue("/api/auth/login?return=%2Fintegrations");

        HttpResponse<String> agent = browser.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/mcp"))
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(agent.statusCode()).isEqualTo(401);
        String challenge = agent.headers().firstValue("www-authenticate").orElseThrow();
        String metadataUrl = challenge.replaceAll(".*resource_metadata=\"([^\"]+)\".*", "$1");
        assertThat(metadataUrl).isEqualTo("http://127.0.0.1:" + port + "/.well-known/oauth-protected-resource/mcp");
        JsonNode metadata = ApiClient.JSON.readTree(browser.send(HttpRequest.newBuilder(URI.create(metadataUrl)).GET().build(),
                HttpResponse.BodyHandlers.ofString()).body());
        assertThat(metadata.path("resource").asString()).isEqualTo("http://127.0.0.1:" + port + "/mcp");
        assertThat(metadata.path("authorization_servers").get(0).asString()).isEqualTo(keycloak.issuer());

        // What the metadata points at is where an agent gets its token: Keycloak's JWT then opens /mcp.
        UsersWalk.McpSession session = UsersWalk.McpSession.open(walk, "/mcp", jwts.get("bob"));
        assertThat(session.id()).isNotBlank();
    }

    @Test
    @Order(3)
    void bobsWalkAimedAtAlicesRowsLeaksNothingAndTheTrailHoldsEveryCallWithHisSubject(CapturedOutput output) throws Exception {
        List<String[]> routes = UsersWalk.documented(new ApiClient(port, OPERATOR_TOKEN));
        assertThat(routes).hasSizeGreaterThanOrEqualTo(51);
        List<Answer> answers = walk.walk(new Caller("bob", port, jwts.get("bob")), world, routes);
        Set<String> marks = Set.of(UsersWalk.A_LABEL, UsersWalk.A_CLIENT_ID, UsersWalk.A_PATTERN, UsersWalk.A_CODE_MARK,
                UsersWalk.A_TOKEN_NAME, subject("alice"));
        Map<Integer, Integer> statuses = new TreeMap<>();
        for (Answer answer : answers) {
            statuses.merge(answer.status(), 1, Integer::sum);
            for (String secret : world.secrets()) {
                assertThat(answer.said()).as("no secret in " + answer).doesNotContain(secret);
            }
            for (String mark : marks) {
                assertThat(answer.said()).as("nothing of alice's in " + answer).doesNotContain(mark);
            }
            if (answer.status() != UsersWalk.OPEN_STREAM) {
                assertThat(answer.status()).as(answer.toString()).isBetween(200, 499);
            }
            boolean aimed = answer.path().contains(world.executionId()) || answer.path().contains(world.mcpExecutionId())
                    || answer.path().contains(world.aTokenId()) || answer.path().contains(world.mcpSession())
                    || answer.path().startsWith("/api/oauth/complete");
            if (aimed && !(answer.method().equals("DELETE") && answer.path().startsWith("/api/policies/"))) {
                assertThat(answer.status()).as(answer.toString()).isIn(403, 404);
            }
        }
        System.out.println("bob's walk (oidc): " + answers.size() + " requests over " + routes.size() + " documented routes; statuses "
                + statuses);

        ApiClient admin = new ApiClient(port, jwts.get("admin"));
        List<JsonNode> events = UsersTokenModeTest.trail(admin, subject("bob"));
        Set<String> recorded = events.stream().filter(event -> event.path("action").asString().equals("request"))
                .map(event -> event.path("target").asString()).collect(Collectors.toSet());
        for (Answer answer : answers) {
            if (!UsersWalk.open(answer.path())) {
                assertThat(recorded).as("bob's " + answer.method() + " " + answer.path() + " in the trail")
                        .contains(answer.method() + " " + answer.path().replaceAll("\\?.*", ""));
            }
        }
        assertThat(events).allSatisfy(event -> assertThat(event.path("via").asString()).isIn("jwt", "session"));
        String whole = UsersTokenModeTest.trail(admin, null).toString();
        String logs = output.getAll();
        for (String secret : world.secrets()) {
            assertThat(whole).doesNotContain(secret);
            assertThat(logs).doesNotContain(secret);
        }
        for (String credential : List.copyOf(jwts.values())) {
            assertThat(whole).as("no JWT in the trail").doesNotContain(credential);
            assertThat(logs).as("no JWT in the logs").doesNotContain(credential);
        }
        for (String cookie : sessions.values()) {
            assertThat(whole).doesNotContain(cookie);
            assertThat(logs).doesNotContain(cookie);
        }
        assertThat(whole).contains("\"action\":\"sign-in\"");
        assertThat(logs).doesNotContain(Keycloak.CLIENT_SECRET);
    }

    @Test
    @Order(4)
    void aViewerSignedInThroughKeycloakChangesNothing() {
        ApiClient viewer = cookie(sessions.get("val"));
        assertThat(viewer.get("/api/connections").status()).isEqualTo(200);
        for (Reply reply : List.of(
                viewer.post("/api/connections", Map.of("owner", "org", "name", "x", "integration", UsersWalk.INTEGRATION, "template", "none",
                        "values", Map.of())),
                viewer.post("/api/policies", Map.of("owner", "user", "pattern", "*", "action", "block")),
                viewer.post("/api/tools/call", Map.of("address", "tools.walk.org.shared.env", "args", Map.of("name", "WALK_SECRET"))),
                viewer.post("/api/executions", Map.of("code", "return 1")),
                viewer.post("/api/tokens", Map.of("name", "mine")),
                viewer.delete("/api/mcp/servers/walk"))) {
            assertThat(reply.status()).as(reply.toString()).isEqualTo(403);
        }
        Reply byJwt = new ApiClient(port, jwts.get("val")).post("/api/policies", Map.of("owner", "user", "pattern", "*", "action", "block"));
        assertThat(byJwt.status()).isEqualTo(403);
    }

    @Test
    @Order(5)
    void aRevokedApiTokenStopsAtOnce() {
        ApiClient bob = new ApiClient(port, jwts.get("bob"));
        JsonNode issued = UsersWalk.ok(bob.post("/api/tokens", Map.of("name", "bob's cli"))).json();
        ApiClient cli = new ApiClient(port, issued.path("token").asString());
        assertThat(UsersWalk.ok(cli.get("/api/auth/me")).json().path("via").asString()).isEqualTo("api-token");
        UsersWalk.ok(new ApiClient(port, jwts.get("admin")).delete("/api/tokens/" + issued.path("tokenInfo").path("id").asString()));
        assertThat(cli.get("/api/connections").status()).isEqualTo(401);
    }

    /**
     * Alice, disabled in Keycloak, loses her API token, her web session and her JWT: the revalidation asks Keycloak within
     * {@code revalidate} and every request looks again within {@code token-recheck}. Her JWT would otherwise have been good
     * until its own expiry, minutes later.
     */
    @Test
    @Order(6)
    void aUserDisabledInKeycloakLosesEveryWayIn(CapturedOutput output) {
        ApiClient token = new ApiClient(port, world.aToken());
        ApiClient session = cookie(sessions.get("alice"));
        ApiClient jwt = new ApiClient(port, jwts.get("alice"));
        for (ApiClient client : List.of(token, session, jwt)) {
            assertThat(client.get("/api/connections").status()).isEqualTo(200);
        }
        Instant jwtExpires = Instant.ofEpochSecond(claims(jwts.get("alice")).path("exp").asLong());

        keycloak.enabled("alice", false);
        long disabledAt = System.nanoTime();
        String disabled = "audit action=user.disabled outcome=ok subject=" + subject("alice");
        Await.until(() -> output.getAll().contains(disabled), Duration.ofMinutes(2), () -> "the revalidation marks alice disabled");
        Await.until(() -> token.get("/api/connections").status() == 401 && session.get("/api/connections").status() == 401
                        && jwt.get("/api/connections").status() == 401,
                Duration.ofMinutes(1), () -> "alice's credentials are refused once the replica looks again");
        Duration lost = Duration.ofNanos(System.nanoTime() - disabledAt);
        assertThat(Instant.now()).as("lost long before her JWT expired").isBefore(jwtExpires);
        System.out.println("alice disabled in Keycloak: every way in refused after " + lost.toMillis() + " ms (revalidate "
                + REVALIDATE.toMillis() + " ms, token-recheck " + RECHECK.toMillis() + " ms); her JWT was good until " + jwtExpires);
        Reply refusedToken = new ApiClient(port, jwts.get("admin")).post("/api/tokens", Map.of("name", "for alice", "subject",
                subject("alice")));
        assertThat(refusedToken.status()).as("no new token for a disabled user").isEqualTo(400);

        keycloak.enabled("alice", true);
        String again = keycloak.signIn(port, "alice");
        assertThat(cookie(again).get("/api/connections").status()).as("signing in again lets her in").isEqualTo(200);
    }

    private static String subject(String user) {
        return claims(jwts.get(user)).path("sub").asString();
    }

    private static JsonNode claims(String jwt) {
        String payload = jwt.split("\\.")[1];
        return ApiClient.JSON.readTree(new String(Base64.getUrlDecoder().decode(payload)));
    }

    /** A client that presents a web session's cookie, as the web UI's page does. */
    private static ApiClient cookie(String session) {
        return new ApiClient(port, null, Map.of("Cookie", "tether_session=" + session));
    }
}
