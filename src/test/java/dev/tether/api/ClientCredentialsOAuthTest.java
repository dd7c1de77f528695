package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

import dev.tether.api.ApiClient.Reply;
import dev.tether.testsupport.MovableClock;
import dev.tether.testsupport.SpringAuthorizationServer;

/**
 * OAuth against a real product: Spring Authorization Server, started in its own process, with a
 * {@code client_credentials} client, in front of a remote MCP server that answers only the tokens it issued. No
 * browser: the connection exists as soon as Tether has a token; its tools list and run with it; once the daemon's
 * clock passes the token's expiry, 20 calls at once share one new token. A wrong secret stores nothing.
 */
@InProcess
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + ClientCredentialsOAuthTest.TOKEN, "tether.docker.reap-interval=1h" })
@DirtiesContext
@Import(MovableClock.AsTheDaemonsClock.class)
class ClientCredentialsOAuthTest {

    static final String TOKEN = "client-credentials-test-token";
    private static final String CLIENT_ID = "tether-service";
    private static final String CLIENT_SECRET = "s3cret-of-the-service";
    private static final Duration BOUND = Duration.ofSeconds(60);

    @TempDir
    static Path dataDir;

    private static SpringAuthorizationServer authorizationServer;
    private static ExecutorOpenApi executor;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", () -> dataDir.toString());
    }

    @LocalServerPort
    int port;

    @Autowired
    MovableClock clock;

    private ApiClient api;

    @BeforeAll
    static void servers() {
        executor = ExecutorOpenApi.load();
        authorizationServer = SpringAuthorizationServer.start(CLIENT_ID, CLIENT_SECRET, dataDir.resolve("authorization-server.log"));
    }

    @AfterAll
    static void stopServers() {
        if (authorizationServer != null) {
            authorizationServer.close();
        }
    }

    @BeforeEach
    void client() {
        api = new ApiClient(port, TOKEN);
    }

    @Test
    void aServiceClientConnectsAtOnceListsAndCallsToolsAndGetsOneNewTokenAtExpiry() {
        String slug = register("Protected Service");
        addClient("service", CLIENT_SECRET);
        int before = authorizationServer.tokenRequests();

        JsonNode started = expect(api.post("/api/oauth/start", start("service", slug)), "post", "/oauth/start", 200);
        assertThat(started.path("status").asString()).as(started.toString()).isEqualTo("connected");
        assertThat(authorizationServer.tokenRequests() - before).as("one token for the connection").isEqualTo(1);
        JsonNode connection = api.get("/api/connections/org/" + slug + "/main").json();
        assertThat(connection.path("template").asString()).isEqualTo("oauth2");
        assertThat(connection.path("oauthClient").asString()).isEqualTo("service");
        double firstExpiry = connection.path("expiresAt").asDouble();
        assertThat(firstExpiry).as("Spring Authorization Server's tokens live an hour").isGreaterThan(clock.millis() + 3_000_000);
        assertThat(connection.toString()).doesNotContain(CLIENT_SECRET);

        Reply refreshed = api.post("/api/connections/org/" + slug + "/main/refresh", null);
        assertThat(refreshed.status()).as(refreshed.toString()).isEqualTo(200);
        assertThat(refreshed.json().valueStream().map(tool -> tool.path("name").asString())).containsExactly("whoami");
        String firstAnswer = whoami(slug);
        assertThat(firstAnswer).as("the MCP server saw a token issued to the client").contains("token of " + CLIENT_ID);
        assertThat(authorizationServer.tokenRequests() - before).as("a fresh token is used as it is").isEqualTo(1);

        clock.advance(Duration.ofHours(2));
        assertThat(whoamiAtOnce(slug, 20)).as("20 calls after expiry carry a new token").doesNotContain(tokenId(firstAnswer));
        assertThat(authorizationServer.tokenRequests() - before).as("20 calls at expiry share one new token").isEqualTo(2);
        assertThat(api.get("/api/connections/org/" + slug + "/main").json().path("expiresAt").asDouble())
                .as("the new token's expiry is kept").isGreaterThan(firstExpiry);
    }

    /**
     * The token is revoked at the authorization server an hour before its recorded expiry: the server refuses it
     * (401) to the warm session and to a new one alike, and calls made at once share one renewal.
     */
    @Test
    void aTokenRevokedBeforeItsExpiryIsRenewedOnceAndTheCallsGoThrough() {
        String slug = register("Revoking Service");
        addClient("revoking", CLIENT_SECRET);
        expect(api.post("/api/oauth/start", start("revoking", slug)), "post", "/oauth/start", 200);
        String revoked = tokenId(whoami(slug));
        authorizationServer.revoke(revoked);
        int before = authorizationServer.tokenRequests();

        assertThat(whoamiAtOnce(slug, 10)).as("10 calls after the revocation carry a new token").doesNotContain(revoked);
        assertThat(authorizationServer.tokenRequests() - before).as("10 refused calls share one renewal").isEqualTo(1);

        String renewed = tokenId(whoami(slug));
        authorizationServer.revoke(renewed);
        Reply relabelled = api.patch("/api/connections/org/" + slug + "/main", Map.of("identityLabel", "service account"));
        assertThat(relabelled.status()).as("a changed connection's session starts afresh: " + relabelled).isEqualTo(200);
        Reply refreshed = api.post("/api/connections/org/" + slug + "/main/refresh", null);
        assertThat(refreshed.status()).as(refreshed.toString()).isEqualTo(200);
        assertThat(refreshed.json().valueStream().map(tool -> tool.path("name").asString()))
                .as("a catalog sync whose session handshake was refused renews the token too").containsExactly("whoami");
    }

    @Test
    void aWrongSecretIsATaggedErrorThatNamesTheRefusalAndStoresNothing() {
        String slug = register("Refused Service");
        addClient("wrong-secret", "not-the-secret");

        Reply refused = api.post("/api/oauth/start", start("wrong-secret", slug));
        JsonNode body = expect(refused, "post", "/oauth/start", 400);
        assertThat(body.path("_tag").asString()).as(refused.toString()).isEqualTo("OAuthStartError");
        assertThat(body.path("message").asString()).contains("invalid_client").doesNotContain("not-the-secret");
        assertThat(api.get("/api/connections/org/" + slug + "/main").status()).isEqualTo(404);
    }

    // ---- the steps ------------------------------------------------------------------------

    private String register(String name) {
        Reply added = api.post("/api/mcp/servers", Map.of("name", name, "endpoint", authorizationServer.mcpUrl(),
                "remoteTransport", "streamable-http"));
        assertThat(added.status()).as(added.toString()).isEqualTo(200);
        return added.json().path("slug").asString();
    }

    private void addClient(String slug, String secret) {
        Map<String, Object> client = new LinkedHashMap<>();
        client.put("owner", "org");
        client.put("slug", slug);
        client.put("authorizationUrl", authorizationServer.origin() + "/oauth2/authorize");
        client.put("tokenUrl", authorizationServer.tokenUrl());
        client.put("grant", "client_credentials");
        client.put("clientId", CLIENT_ID);
        client.put("clientSecret", secret);
        expect(api.post("/api/oauth/clients", client), "post", "/oauth/clients", 200);
    }

    private static Map<String, Object> start(String client, String integration) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("client", client);
        body.put("clientOwner", "org");
        body.put("owner", "org");
        body.put("name", "main");
        body.put("integration", integration);
        body.put("template", "oauth2");
        return body;
    }

    private String whoami(String integration) {
        Reply reply = api.post("/api/executions", Map.of("code", whoamiCode(integration)));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply.body();
    }

    /** {@code count} executions calling {@code whoami} at once, each answered; the token ids they reported. */
    private List<String> whoamiAtOnce(String integration, int count) {
        List<CompletableFuture<Reply>> calls = IntStream.range(0, count)
                .mapToObj(i -> api.sendAsync("POST", "/api/executions", Map.of("code", whoamiCode(integration)))).toList();
        return calls.stream().map(call -> {
            Reply reply = call.orTimeout(BOUND.toSeconds(), TimeUnit.SECONDS).join();
            assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
            assertThat(reply.body()).as(reply.toString()).contains("token of " + CLIENT_ID);
            return tokenId(reply.body());
        }).toList();
    }

    private static String whoamiCode(String integration) {
        return "return await tools." + integration + ".org.main.whoami({})";
    }

    /** The token id the MCP server reported ("token of <client>, id <jti>"). */
    private static String tokenId(String answer) {
        int at = answer.indexOf(", id ");
        assertThat(at).as(answer).isPositive();
        return answer.substring(at + 5, at + 5 + 36);
    }

    private static JsonNode expect(Reply reply, String method, String route, int status) {
        assertThat(reply.status()).as(reply.toString()).isEqualTo(status);
        JsonNode body = reply.json();
        executor.assertConforms(method, route, status, body);
        return body;
    }
}
