package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpResponse;
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
import dev.tether.testsupport.ProxiedOAuthExample;

/**
 * The web UI's OAuth flow, driven over HTTP against the running daemon with the TypeScript SDK's OAuth example
 * behind it: register the server, probe, register a client dynamically, start, follow the authorization URL as a
 * browser does (the example approves at once and redirects to Tether's callback), then list and call the server's
 * tools. A counting proxy in front of the token endpoint answers refresh grants; the daemon's clock is moved past
 * the token's expiry instead of waiting an hour. Every JSON answer is checked against Executor 1.5.9's schema.
 */
@InProcess
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + OAuthFlowTest.TOKEN, "tether.docker.reap-interval=1h", "tether.oauth.timeout=6s",
                // Tether publishes a client metadata document, but the example's server takes none: it registers dynamically
                "tether.oauth.public-base-url=https://tether.example.test" })
@DirtiesContext
@Import(MovableClock.AsTheDaemonsClock.class)
class OAuthFlowTest {

    static final String TOKEN = "oauth-flow-test-token";
    private static final Duration BOUND = Duration.ofSeconds(30);

    @TempDir
    static Path dataDir;

    private static ProxiedOAuthExample oauth;
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
    private final Browser browser = new Browser();

    @BeforeAll
    static void servers() {
        executor = ExecutorOpenApi.load();
        oauth = ProxiedOAuthExample.start(dataDir.resolve("oauth-example.log"));
    }

    @AfterAll
    static void stopServers() {
        if (oauth != null) {
            oauth.close();
        }
    }

    @BeforeEach
    void client() {
        api = new ApiClient(port, TOKEN);
    }

    @Test
    void browserFlowConnectsThenToolsListRunAndRefreshOnceAtExpiry() {
        String slug = register("OAuth Demo");
        String client = registerClient(slug, "oauth-demo-mcp");

        JsonNode clients = expect(api.get("/api/oauth/clients"), "get", "/oauth/clients", 200);
        JsonNode listed = clients.valueStream().filter(c -> c.path("slug").asString().equals(client)).findFirst().orElseThrow();
        assertThat(listed.path("origin").path("kind").asString()).isEqualTo("dynamic_client_registration");
        assertThat(listed.path("origin").path("integration").asString()).isEqualTo(slug);
        assertThat(clients.toString()).doesNotContain("secret");

        String state = authorizeInBrowser(client, slug, "main");

        JsonNode outcome = new ApiClient(port, null).get("/api/oauth/await/" + state).json();
        assertThat(outcome.path("ok").asBoolean()).as(outcome.toString()).isTrue();
        assertThat(outcome.path("type").asString()).isEqualTo("executor:oauth-result");
        assertThat(outcome.path("integration").asString()).isEqualTo(slug);
        assertThat(new ApiClient(port, null).get("/api/oauth/await/" + state).body()).as("the outcome is handed out once").isEqualTo("null");

        JsonNode connection = api.get("/api/connections/user/" + slug + "/main").json();
        assertThat(connection.path("template").asString()).isEqualTo("oauth2");
        assertThat(connection.path("oauthClient").asString()).isEqualTo(client);
        assertThat(connection.path("oauthClientOwner").asString()).isEqualTo("user");
        double firstExpiry = connection.path("expiresAt").asDouble();
        assertThat(firstExpiry).isGreaterThan(clock.millis() + 3_000_000);
        assertThat(connection.toString()).doesNotContain(proxyAccessTokenHint());

        Reply refreshed = api.post("/api/connections/user/" + slug + "/main/refresh", null);
        assertThat(refreshed.status()).as(refreshed.toString()).isEqualTo(200);
        assertThat(refreshed.json().valueStream().map(tool -> tool.path("name").asString())).contains("greet", "multi_greet");

        assertThat(greet(slug, "Tether")).contains("Hello, Tether!");
        assertThat(oauth.proxy().refreshes()).as("a fresh token needs no refresh").isZero();

        Reply replayed = api.post("/api/oauth/complete", Map.of("state", state, "code", "spent"));
        expectError(replayed, "post", "/oauth/complete", 404, "OAuthSessionNotFoundError");

        clock.advance(Duration.ofHours(2));
        List<CompletableFuture<Reply>> calls = IntStream.range(0, 20)
                .mapToObj(i -> api.sendAsync("POST", "/api/executions", Map.of("code", greetCode(slug, "caller " + i))))
                .toList();
        for (int i = 0; i < calls.size(); i++) {
            Reply reply = calls.get(i).orTimeout(BOUND.toSeconds(), TimeUnit.SECONDS).join();
            assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
            assertThat(reply.body()).as("call %d after expiry", i).contains("Hello, caller " + i + "!");
        }
        assertThat(oauth.proxy().refreshes()).as("20 calls at expiry share one refresh").isEqualTo(1);
        assertThat(api.get("/api/connections/user/" + slug + "/main").json().path("expiresAt").asDouble())
                .as("the refreshed token's expiry is kept").isGreaterThan(firstExpiry);

        oauth.proxy().refuseRefresh(true);
        clock.advance(Duration.ofHours(2));
        assertThat(greet(slug, "again")).doesNotContain("Hello");
        JsonNode health = api.post("/api/connections/user/" + slug + "/main/health", null).json();
        assertThat(health.path("status").asString()).as(health.toString()).isEqualTo("expired");
        assertThat(health.path("detail").asString()).contains("re-authorization required");
        assertThat(api.get("/api/connections/user/" + slug + "/main").json().path("lastHealth").path("status").asString())
                .isEqualTo("expired");
        int refusedAt = oauth.proxy().refreshes();
        api.post("/api/connections/user/" + slug + "/main/health", null);
        assertThat(oauth.proxy().refreshes()).as("a refused grant is not asked again until the user authorizes").isEqualTo(refusedAt);

        oauth.proxy().refuseRefresh(false);
        authorizeInBrowser(client, slug, "main");
        assertThat(api.post("/api/connections/user/" + slug + "/main/health", null).json().path("status").asString()).isEqualTo("healthy");
        assertThat(greet(slug, "back")).contains("Hello, back!");
    }

    @Test
    void badInputIsTaggedAndStoresNothing() {
        String slug = register("OAuth Bad Input");
        String client = registerClient(slug, "bad-input-mcp");

        expectError(api.post("/api/oauth/complete", Map.of("state", "never-issued", "code", "x")), "post", "/oauth/complete", 404,
                "OAuthSessionNotFoundError");
        JsonNode unknownClient = expectError(api.post("/api/oauth/start", start("no-such-client", slug, "x")), "post", "/oauth/start", 400,
                "OAuthStartError");
        assertThat(unknownClient.path("message").asString()).contains("no-such-client");

        // cancelled: neither the callback nor complete redeems it
        String cancelled = redirectState(client, slug, "cancelled");
        assertThat(expect(api.post("/api/oauth/cancel", Map.of("state", cancelled)), "post", "/oauth/cancel", 200)
                .path("cancelled").asBoolean()).isTrue();
        assertThat(callback("state=" + cancelled + "&code=whatever").body()).contains("expired or not found");
        expectError(api.post("/api/oauth/complete", Map.of("state", cancelled, "code", "x")), "post", "/oauth/complete", 404,
                "OAuthSessionNotFoundError");

        // a code issued for one session, presented with another: the PKCE verifier does not match
        String first = redirectState(client, slug, "first");
        URI firstAuthorization = URI.create(api.post("/api/oauth/start", start(client, slug, "first-again")).json()
                .path("authorizationUrl").asString());
        String second = redirectState(client, slug, "second");
        String codeOfOther = query(URI.create(browser.location(firstAuthorization)), "code");
        JsonNode mismatch = expectError(api.post("/api/oauth/complete", Map.of("state", second, "code", codeOfOther)),
                "post", "/oauth/complete", 400, "OAuthCompleteError");
        assertThat(mismatch.path("restartRequired").asBoolean()).as(mismatch.toString()).isTrue();
        assertThat(api.get("/api/connections/user/" + slug + "/second").status()).isEqualTo(404);

        // expired: 15 minutes later the state redeems nothing
        clock.advance(Duration.ofMinutes(16));
        expectError(api.post("/api/oauth/complete", Map.of("state", first, "code", "x")), "post", "/oauth/complete", 404,
                "OAuthSessionNotFoundError");
        assertThat(api.get("/api/connections/user/" + slug + "/first").status()).isEqualTo(404);

        // token endpoints that answer garbage or not at all
        for (String path : List.of("/garbage", "/hang")) {
            String name = "cc" + path.replace('/', '-');
            expect(api.post("/api/oauth/clients", Map.of("owner", "org", "slug", name, "authorizationUrl", oauth.proxy().url("/authorize"),
                    "tokenUrl", oauth.proxy().url(path), "grant", "client_credentials", "clientId", "id", "clientSecret", "s3cret")),
                    "post", "/oauth/clients", 200);
            Map<String, Object> body = new LinkedHashMap<>(start(name, slug, name));
            body.put("clientOwner", "org");
            body.put("owner", "org");
            JsonNode failed = expectError(api.post("/api/oauth/start", body), "post", "/oauth/start", 400, "OAuthStartError");
            assertThat(failed.path("message").asString()).contains(path.equals("/garbage") ? "not JSON" : "did not answer within 6000ms")
                    .doesNotContain("s3cret");
            assertThat(api.get("/api/connections/org/" + slug + "/" + name).status()).isEqualTo(404);
            expect(api.send("DELETE", "/api/oauth/clients/" + name, Map.of("owner", "org")), "delete", "/oauth/clients/{slug}", 200);
        }

        Reply insecure = api.post("/api/oauth/clients", Map.of("owner", "org", "slug", "insecure", "authorizationUrl",
                "http://auth.example.com/authorize", "tokenUrl", "http://auth.example.com/token", "grant", "authorization_code",
                "clientId", "id", "clientSecret", ""));
        assertThat(insecure.status()).as(insecure.toString()).isEqualTo(400);
        assertThat(insecure.message()).contains("tokenUrl").contains("https");

        JsonNode noMetadata = expectError(api.post("/api/oauth/probe", Map.of("url", oauth.proxy().url("/mcp"))), "post", "/oauth/probe", 400,
                "OAuthProbeError");
        assertThat(noMetadata.path("message").asString()).contains("No OAuth authorization-server metadata");
    }

    @Test
    void anAuthorizationResponseFromAnotherIssuerIsRefusedAndItsCodeGoesNowhere() {
        String slug = register("OAuth Mix-Up");
        String client = registerClient(slug, "mix-up-mcp");
        String issuer = oauth.example().authorizationServer() + "/";
        int exchanges = oauth.proxy().codeExchanges();

        // RFC 9207: the response names another issuer than the one the request went to (a mix-up)
        URI back = followToCallback(client, slug, "mixed");
        String state = query(back, "state");
        HttpResponse<String> page = callback(back.getRawQuery() + "&iss=" + encode("https://attacker.example/"));
        assertThat(page.body()).contains("\"ok\":false").contains("RFC 9207").contains("https://attacker.example/").contains(issuer);
        JsonNode refused = new ApiClient(port, null).get("/api/oauth/await/" + state).json();
        assertThat(refused.path("errorDetails").asString()).as(refused.toString())
                .isEqualTo("the authorization response came from issuer https://attacker.example/, but the authorization request went to "
                        + issuer + " (RFC 9207): refused");
        assertThat(oauth.proxy().codeExchanges()).as("the code was not sent to any token endpoint").isEqualTo(exchanges);
        assertThat(api.get("/api/connections/user/" + slug + "/mixed").status()).isEqualTo(404);
        expectError(api.post("/api/oauth/complete", Map.of("state", state, "code", query(back, "code"))), "post", "/oauth/complete", 404,
                "OAuthSessionNotFoundError");

        // an error answer from another issuer is reported as the mismatch, not with the attacker's text
        URI erred = followToCallback(client, slug, "erred");
        String erredState = query(erred, "state");
        callback("state=" + erredState + "&error=access_denied&error_description=" + encode("Visit evil.example to fix this")
                + "&iss=" + encode("https://attacker.example/"));
        assertThat(new ApiClient(port, null).get("/api/oauth/await/" + erredState).json().path("errorDetails").asString())
                .contains("RFC 9207").doesNotContain("evil.example");

        // the issuer the request went to, named exactly, passes
        URI good = followToCallback(client, slug, "matched");
        assertThat(callback(good.getRawQuery() + "&iss=" + encode(issuer)).body()).contains("\"ok\":true");
        assertThat(api.get("/api/connections/user/" + slug + "/matched").status()).isEqualTo(200);
    }

    @Test
    void metadataThatNamesAnotherIssuerThanItWasFetchedForIsRefused() {
        // the resource names the example's server as 127.0.0.1, whose metadata says it is localhost
        String named = oauth.example().authorizationServer().replace("localhost", "127.0.0.1") + "/";
        JsonNode refused = expectError(api.post("/api/oauth/probe", Map.of("url", oauth.proxy().url("/misdirected"))), "post", "/oauth/probe",
                400, "OAuthProbeError");
        assertThat(refused.path("message").asString()).isEqualTo("the authorization server metadata at " + named
                + ".well-known/oauth-authorization-server names issuer " + oauth.example().authorizationServer() + "/, not "
                + named + " that it was fetched for (RFC 8414 §3.3): refused");
    }

    // ---- the UI's steps -------------------------------------------------------------------

    private String register(String name) {
        // the UI probes the URL first: an OAuth server gets its sign-in (and dynamic registration) offered
        JsonNode probe = expect(api.post("/api/mcp/probe", Map.of("endpoint", oauth.example().mcpUrl())), "post", "/mcp/probe", 200);
        assertThat(probe.path("requiresOAuth").asBoolean()).as(probe.toString()).isTrue();
        assertThat(probe.path("supportsDynamicRegistration").asBoolean()).as(probe.toString()).isTrue();
        assertThat(probe.path("requiresAuthentication").asBoolean()).isTrue();
        assertThat(probe.path("connected").asBoolean()).isFalse();
        Reply added = api.post("/api/mcp/servers", Map.of("name", name, "endpoint", oauth.example().mcpUrl(), "remoteTransport", "streamable-http"));
        assertThat(added.status()).as(added.toString()).isEqualTo(200);
        return added.json().path("slug").asString();
    }

    /** Probes the server and registers a client dynamically, with the token endpoint behind the counting proxy. */
    private String registerClient(String integration, String clientSlug) {
        JsonNode probe = expect(api.post("/api/oauth/probe", Map.of("url", oauth.example().mcpUrl())), "post", "/oauth/probe", 200);
        assertThat(probe.path("authorizationUrl").asString()).isEqualTo(oauth.example().authorizationServer() + "/authorize");
        assertThat(probe.path("tokenUrl").asString()).isEqualTo(oauth.example().authorizationServer() + "/token");
        assertThat(probe.path("resource").asString()).isEqualTo(oauth.example().mcpUrl());
        assertThat(probe.path("registrationEndpoint").asString()).as("a server without client metadata documents: dynamic registration")
                .isEqualTo(oauth.example().authorizationServer() + "/register");
        Map<String, Object> registration = new LinkedHashMap<>();
        registration.put("owner", "user");
        registration.put("slug", clientSlug);
        registration.put("registrationEndpoint", probe.path("registrationEndpoint").asString());
        registration.put("authorizationUrl", probe.path("authorizationUrl").asString());
        registration.put("tokenUrl", oauth.proxy().url("/token"));
        registration.put("resource", probe.path("resource").asString());
        registration.put("scopes", List.of());
        registration.put("tokenEndpointAuthMethodsSupported", probe.path("tokenEndpointAuthMethodsSupported").valueStream()
                .map(JsonNode::asString).toList());
        registration.put("clientName", "Tether test");
        registration.put("originIntegration", integration);
        JsonNode registered = expect(api.post("/api/oauth/clients/register-dynamic", registration), "post",
                "/oauth/clients/register-dynamic", 200);
        return registered.path("client").asString();
    }

    /** The body of {@code POST /api/oauth/start} for a user's connection {@code name} through the user's {@code client}. */
    static Map<String, Object> start(String client, String integration, String name) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("client", client);
        body.put("clientOwner", "user");
        body.put("owner", "user");
        body.put("name", name);
        body.put("integration", integration);
        body.put("template", "oauth2");
        return body;
    }

    private String redirectState(String client, String integration, String name) {
        JsonNode started = expect(api.post("/api/oauth/start", start(client, integration, name)), "post", "/oauth/start", 200);
        assertThat(started.path("status").asString()).isEqualTo("redirect");
        return started.path("state").asString();
    }

    /** Starts a flow and follows it as a browser: the authorization server, then Tether's callback page. */
    private String authorizeInBrowser(String client, String integration, String name) {
        JsonNode started = expect(api.post("/api/oauth/start", start(client, integration, name)), "post", "/oauth/start", 200);
        String authorizationUrl = started.path("authorizationUrl").asString();
        assertThat(authorizationUrl).contains("code_challenge_method=S256").contains("state=" + started.path("state").asString())
                .contains("resource=");
        URI back = URI.create(browser.location(URI.create(authorizationUrl)));
        assertThat(back.getPath()).isEqualTo("/api/oauth/callback");
        assertThat(back.getPort()).isEqualTo(port);
        HttpResponse<String> page = callback(back.getRawQuery());
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("content-type").orElse("")).startsWith("text/html");
        assertThat(page.body()).contains("You may close this window").contains("\"ok\":true");
        return started.path("state").asString();
    }

    /** Starts a flow and follows its authorization URL to the redirect back to Tether, without going there yet. */
    private URI followToCallback(String client, String integration, String name) {
        JsonNode started = expect(api.post("/api/oauth/start", start(client, integration, name)), "post", "/oauth/start", 200);
        return URI.create(browser.location(URI.create(started.path("authorizationUrl").asString())));
    }

    private static String encode(String value) {
        return java.net.URLEncoder.encode(value, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** The callback as the browser reaches it: without Tether's token. */
    private HttpResponse<String> callback(String query) {
        return browser.get(URI.create("http://127.0.0.1:" + port + "/api/oauth/callback?" + query));
    }

    private static String query(URI uri, String name) {
        for (String pair : uri.getRawQuery().split("&")) {
            if (pair.startsWith(name + "=")) {
                return java.net.URLDecoder.decode(pair.substring(name.length() + 1), java.nio.charset.StandardCharsets.UTF_8);
            }
        }
        throw new AssertionError(uri + " has no " + name);
    }

    private String greet(String integration, String name) {
        Reply reply = api.post("/api/executions", Map.of("code", greetCode(integration, name)));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply.body();
    }

    private static String greetCode(String integration, String name) {
        return "return await tools." + integration + ".user.main.greet({ name: \"" + name + "\" })";
    }

    /** Tokens are UUIDs at the example's server: no UUID-shaped value may show in a connection. */
    private static String proxyAccessTokenHint() {
        return "access_token";
    }

    private static JsonNode expect(Reply reply, String method, String route, int status) {
        assertThat(reply.status()).as(reply.toString()).isEqualTo(status);
        JsonNode body = reply.json();
        executor.assertConforms(method, route, status, body);
        return body;
    }

    private static JsonNode expectError(Reply reply, String method, String route, int status, String tag) {
        JsonNode body = expect(reply, method, route, status);
        assertThat(body.path("_tag").asString()).as(reply.toString()).isEqualTo(tag);
        return body;
    }
}
