package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

import dev.tether.api.ApiClient.Reply;
import dev.tether.testsupport.BooksGraphqlServer;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.Fixture.EverythingTransport;
import dev.tether.testsupport.OAuthExampleServer;
import dev.tether.testsupport.OsProcesses;

/**
 * Every route that Executor 1.5.9 has and Tether serves, driven over HTTP against the running daemon. Each body,
 * success or error, is validated with a JSON-schema validator against the schema that 1.5.9's OpenAPI document
 * declares for that route and status, and the status and {@code _tag} are asserted.
 *
 * <p>Servers behind the routes are real: the project's stdio fixture and {@code server-everything} in streamable-HTTP
 * mode on a loopback port, started here and stopped in {@link #stopEverything()}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + ExecutorContractTest.TOKEN, "tether.docker.reap-interval=1h" })
@DirtiesContext
class ExecutorContractTest {

    static final String TOKEN = "contract-test-token";
    private static final String RUN = UUID.randomUUID().toString().substring(0, 12);
    private static final Duration BOUND = Duration.ofSeconds(20);

    @TempDir
    static Path dataDir;

    private static ExecutorOpenApi executor;
    private static Process everything;
    private static int everythingPort;
    private static int daemonPort;
    private static final Set<String> DRIVEN = ConcurrentHashMap.newKeySet();

    @LocalServerPort
    int port;

    private ApiClient api;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        // the embedded H2 store, the token file and the child ledger all live under it
        registry.add("tether.data-dir", () -> dataDir.toString());
        registry.add("tether.onepassword.cli", () -> StandInOp.write().toString());
    }

    @BeforeAll
    static void startEverything() {
        executor = ExecutorOpenApi.load();
        everythingPort = Fixture.freeLoopbackPort();
        everything = startHttpEverything(everythingPort, dataDir.resolve("everything.log"));
    }

    /** Then: every route that 1.5.9 has and this daemon documents at /api/docs was driven and validated above. */
    @AfterAll
    static void stopEverything() {
        try {
            if (daemonPort == 0) {
                return; // no test ran: nothing to account for
            }
            List<String> served = new ArrayList<>();
            JsonNode paths = new ApiClient(daemonPort, null).get("/api/docs").json().path("paths");
            for (String path : paths.propertyNames()) {
                String route = path.substring("/api".length());
                paths.path(path).propertyNames().stream().filter(method -> executor.has(method, route))
                        .forEach(method -> served.add(method + " " + route));
            }
            assertThat(served).as("routes of 1.5.9 that Tether serves").hasSizeGreaterThanOrEqualTo(16);
            assertThat(DRIVEN).as("routes driven and validated").containsAll(served);
        }
        finally {
            stop(everything);
        }
    }

    @BeforeEach
    void client() {
        api = new ApiClient(port, TOKEN);
        daemonPort = port;
    }

    /** Removes every integration through the API, which ends its sessions; then no child of this class may live on. */
    @AfterEach
    void removeIntegrations() {
        try {
            for (JsonNode integration : api.get("/api/integrations").json()) {
                assertThat(api.delete("/api/integrations/" + integration.path("slug").asString()).status()).isEqualTo(200);
            }
            OsProcesses.awaitNoneMatching("--run=" + RUN, BOUND);
        }
        finally {
            OsProcesses.matching("--run=" + RUN).forEach(ProcessHandle::destroyForcibly);
        }
    }

    /**
     * Every OAuth route, against the TypeScript SDK's OAuth example (an MCP server behind an authorization server with
     * dynamic registration and PKCE): the flow completed through {@code complete}, and through the callback page.
     */
    @Test
    void oauthRoutes() throws Exception {
        try (OAuthExampleServer example = OAuthExampleServer.start(dataDir.resolve("oauth-example.log"))) {
            String slug = expect(api.post("/api/mcp/servers", Map.of("name", "Contract OAuth", "endpoint", example.mcpUrl(),
                    "remoteTransport", "streamable-http")), "post", "/mcp/servers", 200).path("slug").asString();
            JsonNode probe = expect(api.post("/api/oauth/probe", Map.of("url", example.mcpUrl())), "post", "/oauth/probe", 200);
            expectError(api.post("/api/oauth/probe", Map.of("url", "http://127.0.0.1:1/mcp")), "post", "/oauth/probe", 400,
                    "OAuthProbeError");

            Map<String, Object> registration = new LinkedHashMap<>();
            registration.put("owner", "org");
            registration.put("slug", "contract-oauth");
            registration.put("registrationEndpoint", probe.path("registrationEndpoint").asString());
            registration.put("authorizationUrl", probe.path("authorizationUrl").asString());
            registration.put("tokenUrl", probe.path("tokenUrl").asString());
            registration.put("resource", probe.path("resource").asString());
            registration.put("scopes", List.of());
            registration.put("originIntegration", slug);
            assertThat(expect(api.post("/api/oauth/clients/register-dynamic", registration), "post", "/oauth/clients/register-dynamic", 200)
                    .path("client").asString()).isEqualTo("contract-oauth");
            Map<String, Object> refused = new LinkedHashMap<>(registration);
            refused.put("registrationEndpoint", "http://127.0.0.1:1/register");
            expectError(api.post("/api/oauth/clients/register-dynamic", refused), "post", "/oauth/clients/register-dynamic", 400,
                    "OAuthRegisterDynamicError");
            expect(api.post("/api/oauth/clients", Map.of("owner", "org", "slug", "contract-manual", "authorizationUrl",
                    "https://auth.example.com/authorize", "tokenUrl", "https://auth.example.com/token", "grant", "authorization_code",
                    "clientId", "manual-id", "clientSecret", "manual-secret")), "post", "/oauth/clients", 200);
            Reply clients = api.get("/api/oauth/clients");
            assertThat(expect(clients, "get", "/oauth/clients", 200).valueStream().map(c -> c.path("slug").asString()))
                    .contains("contract-oauth", "contract-manual");
            assertThat(clients.body()).doesNotContain("manual-secret");

            Map<String, Object> start = new LinkedHashMap<>(Map.of("client", "contract-oauth", "clientOwner", "org", "owner", "org",
                    "name", "default", "integration", slug, "template", "oauth2"));
            JsonNode started = expect(api.post("/api/oauth/start", start), "post", "/oauth/start", 200);
            String code = codeFrom(started.path("authorizationUrl").asString());
            JsonNode connection = expect(api.post("/api/oauth/complete", Map.of("state", started.path("state").asString(), "code", code)),
                    "post", "/oauth/complete", 200);
            assertThat(connection.path("oauthClient").asString()).isEqualTo("contract-oauth");
            expectError(api.post("/api/oauth/complete", Map.of("state", started.path("state").asString(), "code", code)),
                    "post", "/oauth/complete", 404, "OAuthSessionNotFoundError");

            JsonNode again = expect(api.post("/api/oauth/start", start), "post", "/oauth/start", 200);
            Reply page = new ApiClient(port, null).get("/api/oauth/callback?state=" + again.path("state").asString() + "&code="
                    + codeFrom(again.path("authorizationUrl").asString()));
            assertThat(page.status()).as(page.toString()).isEqualTo(200);
            assertThat(page.body()).contains("You may close this window");
            DRIVEN.add("get /oauth/callback");
            assertThat(expect(api.post("/api/oauth/cancel", Map.of("state", again.path("state").asString())), "post", "/oauth/cancel", 200)
                    .path("cancelled").asBoolean()).isTrue();
            start.put("client", "no-such-client");
            expectError(api.post("/api/oauth/start", start), "post", "/oauth/start", 400, "OAuthStartError");

            for (String client : List.of("contract-oauth", "contract-manual")) {
                assertThat(expect(api.send("DELETE", "/api/oauth/clients/" + client, Map.of("owner", "org")), "delete",
                        "/oauth/clients/{slug}", 200).path("removed").asBoolean()).isTrue();
            }
        }
    }

    /** Follows an authorization URL as far as the authorization server's redirect, and takes the code from it. */
    private static String codeFrom(String authorizationUrl) throws Exception {
        java.net.http.HttpResponse<String> redirect = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(authorizationUrl)).timeout(BOUND).GET().build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        String location = redirect.headers().firstValue("location").orElseThrow(() -> new AssertionError(redirect.body()));
        return java.net.URLDecoder.decode(location.replaceFirst(".*[?&]code=([^&]+).*", "$1"), java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void integrationRoutes() {
        String slug = expect(api.post("/api/mcp/servers", stdio("Contract Fixture", null)), "post", "/mcp/servers", 200)
                .path("slug").asString();
        assertThat(slug).isEqualTo("contract_fixture");

        JsonNode list = expect(api.get("/api/integrations"), "get", "/integrations", 200);
        assertThat(list.valueStream().map(i -> i.path("slug").asString())).containsExactly("executor", slug);
        assertThat(list.get(0).toString()).isEqualTo("{\"slug\":\"executor\",\"description\":\"Executor\",\"kind\":\"built-in\","
                + "\"canRemove\":false,\"canRefresh\":false,\"authMethods\":[]}");
        assertThat(expect(api.get("/api/integrations/executor"), "get", "/integrations/{slug}", 200)).isEqualTo(list.get(0));

        JsonNode one = expect(api.get("/api/integrations/" + slug), "get", "/integrations/{slug}", 200);
        assertThat(one.path("kind").asString()).isEqualTo("mcp");
        assertThat(one.path("description").asString()).as("Executor describes a new server by its name").isEqualTo("Contract Fixture");

        JsonNode patched = expect(api.patch("/api/integrations/" + slug, Map.of("description", "patched")),
                "patch", "/integrations/{slug}", 200);
        assertThat(patched.path("description").asString()).isEqualTo("patched");
        assertThat(api.get("/api/integrations/" + slug).json().path("description").asString()).isEqualTo("patched");

        JsonNode missing = expectError(api.get("/api/integrations/no_such"), "get", "/integrations/{slug}", 404,
                "IntegrationNotFoundError");
        assertThat(missing.path("slug").asString()).isEqualTo("no_such");
        expectError(api.patch("/api/integrations/no_such", Map.of("description", "x")), "patch", "/integrations/{slug}", 404,
                "IntegrationNotFoundError");

        assertThat(expect(api.delete("/api/integrations/" + slug), "delete", "/integrations/{slug}", 200)
                .path("removed").asBoolean()).isTrue();
        assertThat(expect(api.delete("/api/integrations/" + slug), "delete", "/integrations/{slug}", 200)
                .path("removed").asBoolean()).isFalse();
        expectError(api.get("/api/integrations/" + slug), "get", "/integrations/{slug}", 404, "IntegrationNotFoundError");
    }

    @Test
    void mcpServerRoutes() {
        Map<String, Object> stdio = stdio("Contract Stdio", "contract-stdio");
        stdio.put("description", "the fixture over stdio");
        stdio.put("env", Map.of("FIXTURE_SECRET", "env-secret"));
        assertThat(expect(api.post("/api/mcp/servers", stdio), "post", "/mcp/servers", 200).path("slug").asString())
                .isEqualTo("contract-stdio");
        JsonNode clash = expectError(api.post("/api/mcp/servers", stdio), "post", "/mcp/servers", 409,
                "IntegrationAlreadyExistsError");
        assertThat(clash.path("slug").asString()).isEqualTo("contract-stdio");

        Reply stdioServer = api.get("/api/mcp/servers/contract-stdio");
        JsonNode shown = expect(stdioServer, "get", "/mcp/servers/{slug}", 200);
        assertThat(shown.path("config").path("transport").asString()).isEqualTo("stdio");
        assertThat(shown.path("config").path("command").asString()).isEqualTo(Fixture.nodeBinary().toString());
        assertThat(stdioServer.body()).doesNotContain("env-secret");

        List<String> fewerTools = new ArrayList<>(Fixture.command("--run=" + RUN, "--tools=5"));
        Map<String, Object> changed = Map.of("transport", "stdio", "command", fewerTools.get(0),
                "args", fewerTools.subList(1, fewerTools.size()));
        JsonNode configured = expect(api.post("/api/mcp/servers/contract-stdio/config", Map.of("config", changed)),
                "post", "/mcp/servers/{slug}/config", 200);
        assertThat(configured.path("config").path("args").valueStream().map(JsonNode::asString)).contains("--tools=5");

        Map<String, Object> remote = new LinkedHashMap<>();
        remote.put("name", "Everything Remote");
        remote.put("endpoint", everythingEndpoint());
        remote.put("remoteTransport", "streamable-http");
        remote.put("headers", Map.of("X-Contract", "header-secret"));
        remote.put("queryParams", Map.of("contract", "1"));
        assertThat(expect(api.post("/api/mcp/servers", remote), "post", "/mcp/servers", 200).path("slug").asString())
                .isEqualTo("everything_remote");
        Reply remoteServer = api.get("/api/mcp/servers/everything_remote");
        JsonNode remoteShown = expect(remoteServer, "get", "/mcp/servers/{slug}", 200);
        assertThat(remoteShown.path("config").path("endpoint").asString()).isEqualTo(everythingEndpoint());
        assertThat(remoteShown.path("config").path("remoteTransport").asString()).isEqualTo("streamable-http");
        assertThat(remoteShown.path("config").path("headers").has("X-Contract")).isTrue();
        assertThat(remoteServer.body()).doesNotContain("header-secret");

        Map<String, Object> remoteConfig = Map.of("transport", "remote", "endpoint", everythingEndpoint(),
                "remoteTransport", "auto", "authenticationTemplate", List.of());
        JsonNode reconfigured = expect(api.post("/api/mcp/servers/everything_remote/config", Map.of("config", remoteConfig)),
                "post", "/mcp/servers/{slug}/config", 200);
        assertThat(reconfigured.path("config").path("remoteTransport").asString()).isEqualTo("auto");

        // 1.5.9 declares no 404 here: an unknown slug is a 200 with `null`
        Reply unknown = api.get("/api/mcp/servers/no_such");
        assertThat(expect(unknown, "get", "/mcp/servers/{slug}", 200).isNull()).as(unknown.toString()).isTrue();

        assertThat(expect(api.delete("/api/mcp/servers/everything_remote"), "delete", "/mcp/servers/{slug}", 200)
                .path("removed").asBoolean()).isTrue();
        assertThat(expect(api.delete("/api/mcp/servers/everything_remote"), "delete", "/mcp/servers/{slug}", 200)
                .path("removed").asBoolean()).isFalse();
    }

    @Test
    void probeOfARealStreamableHttpServer() {
        JsonNode probe = expect(api.post("/api/mcp/probe", Map.of("endpoint", everythingEndpoint())), "post", "/mcp/probe", 200);
        assertThat(probe.path("connected").asBoolean()).isTrue();
        assertThat(probe.path("requiresAuthentication").asBoolean()).isFalse();
        assertThat(probe.path("toolCount").asInt()).isPositive();
        assertThat(probe.path("serverName").isString()).isTrue();
        assertThat(probe.path("slug").asString()).matches("[a-z0-9_]+");

        try (Fixture.RefusingPort nothingThere = Fixture.refusingLoopbackPort()) {
            JsonNode refused = expectError(api.post("/api/mcp/probe", Map.of("endpoint", nothingThere.endpoint())), "post",
                    "/mcp/probe", 400, "McpConnectionError");
            assertThat(refused.path("message").asString()).contains(nothingThere.endpoint());
        }
        assertThat(api.get("/api/integrations").json().valueStream().map(i -> i.path("slug").asString())).as("a probe registers nothing")
                .containsExactly("executor");
    }

    @Test
    void connectionRoutes() {
        expect(api.post("/api/mcp/servers", stdio("Conn Fixture", "conn-fixture")), "post", "/mcp/servers", 200);
        assertThat(expect(api.get("/api/connections"), "get", "/connections", 200).size()).as("registering makes no connection").isZero();
        expect(api.post("/api/connections", TetherClient.defaultConnection("conn-fixture")), "post", "/connections", 200);

        JsonNode all = expect(api.get("/api/connections"), "get", "/connections", 200);
        assertThat(all.valueStream().map(c -> c.path("address").asString())).containsExactly("tools.conn-fixture.org.default");
        expect(api.get("/api/connections?integration=conn-fixture&owner=org"), "get", "/connections", 200);
        assertThat(expect(api.get("/api/connections?owner=user"), "get", "/connections", 200).size()).isZero();

        Map<String, Object> create = new LinkedHashMap<>(Map.of("owner", "user", "name", "mine", "integration", "conn-fixture",
                "template", "API_TOKEN", "identityLabel", "me@example.com", "value", "value-secret"));
        Reply created = api.post("/api/connections", create);
        JsonNode connection = expect(created, "post", "/connections", 200);
        assertThat(connection.path("address").asString()).isEqualTo("tools.conn-fixture.user.mine");
        assertThat(connection.path("identityLabel").asString()).isEqualTo("me@example.com");
        assertThat(created.body()).doesNotContain("value-secret");

        JsonNode duplicate = expectError(api.post("/api/connections", create), "post", "/connections", 400,
                "InvalidConnectionInputError");
        assertThat(duplicate.path("message").asString()).contains("user/conn-fixture/mine").contains("already exists");
        Map<String, Object> noCredential = new LinkedHashMap<>(create);
        noCredential.remove("value");
        noCredential.put("name", "other");
        assertThat(expectError(api.post("/api/connections", noCredential), "post", "/connections", 400,
                "InvalidConnectionInputError").path("message").asString()).contains("exactly one of");
        Map<String, Object> unknownIntegration = new LinkedHashMap<>(create);
        unknownIntegration.put("integration", "no_such");
        assertThat(expectError(api.post("/api/connections", unknownIntegration), "post", "/connections", 404,
                "IntegrationNotFoundError").path("slug").asString()).isEqualTo("no_such");

        Reply fetched = api.get("/api/connections/user/conn-fixture/mine");
        assertThat(expect(fetched, "get", "/connections/{owner}/{integration}/{name}", 200).path("template").asString())
                .isEqualTo("API_TOKEN");
        assertThat(fetched.body()).doesNotContain("value-secret");
        JsonNode notFound = expectError(api.get("/api/connections/user/conn-fixture/nope"),
                "get", "/connections/{owner}/{integration}/{name}", 404, "ConnectionNotFoundError");
        assertThat(List.of(notFound.path("owner").asString(), notFound.path("integration").asString(), notFound.path("name").asString()))
                .containsExactly("user", "conn-fixture", "nope");

        // A health check (a route of later 1.5.x daemons) persists the connection's lastHealth.
        Reply checked = api.post("/api/connections/org/conn-fixture/default/health", null);
        assertThat(checked.status()).as(checked.toString()).isEqualTo(200);
        assertThat(checked.json().path("status").asString()).isEqualTo("healthy");
        JsonNode healthy = json(api.get("/api/connections/org/conn-fixture/default"), 200);
        assertThat(healthy.path("lastHealth").path("status").asString()).isEqualTo("healthy");
        assertThat(executor.violations("get", "/connections/{owner}/{integration}/{name}", 200, healthy))
                .as("lastHealth is the one field 1.5.9's closed schema lacks")
                .singleElement().satisfies(error -> assertThat(error.toString()).contains("lastHealth"));
        expect(api.get("/api/connections/org/conn-fixture/default"), "get", "/connections/{owner}/{integration}/{name}", 200);
        expect(api.get("/api/connections"), "get", "/connections", 200);

        JsonNode refreshed = expect(api.post("/api/connections/org/conn-fixture/default/refresh", null),
                "post", "/connections/{owner}/{integration}/{name}/refresh", 200);
        assertThat(refreshed.valueStream().map(t -> t.path("address").asString()))
                .hasSize(8).contains("tools.conn-fixture.org.default.echo", "tools.conn-fixture.org.default.delete_everything");
        expectError(api.post("/api/connections/user/conn-fixture/nope/refresh", null),
                "post", "/connections/{owner}/{integration}/{name}/refresh", 404, "ConnectionNotFoundError");

        assertThat(expect(api.delete("/api/connections/user/conn-fixture/mine"), "delete", "/connections/{owner}/{integration}/{name}", 200)
                .path("removed").asBoolean()).isTrue();
        expectError(api.delete("/api/connections/user/conn-fixture/mine"), "delete", "/connections/{owner}/{integration}/{name}", 404,
                "ConnectionNotFoundError");
    }

    @Test
    void toolRoutes() {
        expect(api.post("/api/mcp/servers", stdio("Tools Fixture", "tools-fixture")), "post", "/mcp/servers", 200);
        expect(api.post("/api/mcp/servers", Map.of("name", "Everything", "endpoint", everythingEndpoint(),
                "remoteTransport", "streamable-http")), "post", "/mcp/servers", 200);
        expect(api.post("/api/connections", TetherClient.defaultConnection("tools-fixture")), "post", "/connections", 200);
        expect(api.post("/api/connections", TetherClient.defaultConnection("everything")), "post", "/connections", 200);
        expect(api.post("/api/connections/org/tools-fixture/default/refresh", null),
                "post", "/connections/{owner}/{integration}/{name}/refresh", 200);
        JsonNode remoteTools = expect(api.post("/api/connections/org/everything/default/refresh", null),
                "post", "/connections/{owner}/{integration}/{name}/refresh", 200);
        assertThat(remoteTools.valueStream().map(t -> t.path("name").asString())).contains("echo");

        JsonNode tools = expect(api.get("/api/tools"), "get", "/tools", 200);
        assertThat(tools.valueStream().map(t -> t.path("address").asString()))
                .contains("tools.tools-fixture.org.default.echo", "tools.everything.org.default.echo");

        JsonNode filtered = expect(api.get("/api/tools?integration=tools-fixture&owner=org&connection=default&query=delete"
                + "&includeAnnotations=true&includeBlocked=true"), "get", "/tools", 200);
        assertThat(filtered).singleElement().satisfies(tool -> {
            assertThat(tool.path("name").asString()).isEqualTo("delete_everything");
            assertThat(tool.path("description").asString()).isEqualTo("MCP tool: delete_everything");
            assertThat(tool.path("requiresApproval").asBoolean()).isTrue();
        });

        JsonNode echo = expect(api.get("/api/tools/schema?address=tools.tools-fixture.org.default.echo"), "get", "/tools/schema", 200);
        assertThat(echo.path("address").asString()).isEqualTo("tools.tools-fixture.org.default.echo");
        assertThat(echo.path("inputSchema").path("properties").has("text")).isTrue();
        expect(api.get("/api/tools/schema?address=tools.everything.org.default.echo"), "get", "/tools/schema", 200);

        JsonNode unknown = expectError(api.get("/api/tools/schema?address=tools.tools-fixture.org.default.no_such"),
                "get", "/tools/schema", 404, "ToolNotFoundError");
        assertThat(unknown.path("address").asString()).isEqualTo("tools.tools-fixture.org.default.no_such");
    }

    @Test
    void openApiRoutes() {
        String docs = "http://127.0.0.1:" + port + "/api/docs";
        JsonNode preview = expect(api.post("/api/openapi/preview", Map.of("spec", docs)), "post", "/openapi/preview", 200);
        assertThat(preview.path("operationCount").asInt()).isGreaterThan(20);
        expectError(api.post("/api/openapi/preview", Map.of("spec", "not: [valid")), "post", "/openapi/preview", 400,
                "OpenApiParseError");

        Map<String, Object> add = new LinkedHashMap<>();
        add.put("spec", Map.of("kind", "url", "url", docs));
        add.put("slug", "tether_api");
        add.put("description", "Tether's own API");
        add.put("headers", Map.of("X-Contract", "header-secret"));
        add.put("authenticationTemplate", List.of(Map.of("slug", "bearer", "type", "apiKey",
                "headers", Map.of("Authorization", List.of("Bearer ", Map.of("type", "variable", "name", "token"))))));
        JsonNode added = expect(api.post("/api/openapi/specs", add), "post", "/openapi/specs", 200);
        assertThat(added.path("slug").asString()).isEqualTo("tether_api");
        expectError(api.post("/api/openapi/specs", add), "post", "/openapi/specs", 409, "IntegrationAlreadyExistsError");
        expectError(api.post("/api/openapi/specs", Map.of("spec", Map.of("kind", "blob", "value", "{\"openapi\":\"3.0.0\","
                + "\"paths\":{}}"), "slug", "empty")), "post", "/openapi/specs", 400, "OpenApiExtractionError");

        JsonNode one = expect(api.get("/api/openapi/integrations/tether_api"), "get", "/openapi/integrations/{slug}", 200);
        assertThat(one.path("kind").asString()).isEqualTo("openapi");
        assertThat(one.path("description").asString()).isEqualTo("Tether's own API");
        assertThat(expect(api.get("/api/openapi/integrations/no_such"), "get", "/openapi/integrations/{slug}", 200).isNull()).isTrue();

        Reply config = api.get("/api/openapi/integrations/tether_api/config");
        JsonNode shown = expect(config, "get", "/openapi/integrations/{slug}/config", 200);
        assertThat(shown.path("sourceUrl").asString()).isEqualTo(docs);
        assertThat(shown.path("headers").has("X-Contract")).isTrue();
        assertThat(config.body()).doesNotContain("header-secret");
        assertThat(expect(api.get("/api/openapi/integrations/no_such/config"), "get", "/openapi/integrations/{slug}/config", 200)
                .isNull()).isTrue();

        JsonNode configured = expect(api.post("/api/openapi/integrations/tether_api/config", Map.of("authenticationTemplate",
                        List.of(Map.of("slug", "key", "type", "apiKey", "queryParams", Map.of("key", List.of(Map.of("type", "variable", "name", "token"))))))),
                "post", "/openapi/integrations/{slug}/config", 200);
        assertThat(configured.path("authenticationTemplate").valueStream().map(t -> t.path("slug").asString())).containsExactly("bearer", "key");
        JsonNode replaced = expect(api.post("/api/openapi/integrations/tether_api/config", Map.of("mode", "replace",
                        "authenticationTemplate", List.of(Map.of("slug", "header", "type", "apiKey",
                                "headers", Map.of("X-Key", List.of(Map.of("type", "variable", "name", "token"))))))),
                "post", "/openapi/integrations/{slug}/config", 200);
        assertThat(replaced.path("authenticationTemplate").valueStream().map(t -> t.path("slug").asString())).containsExactly("header");

        // 1.5.9 answers its Void with an empty 200
        Reply removed = api.delete("/api/openapi/integrations/tether_api");
        assertThat(removed.status()).as(removed.toString()).isEqualTo(200);
        assertThat(removed.body()).isEmpty();
        DRIVEN.add("delete /openapi/integrations/{slug}");
        assertThat(api.get("/api/integrations").json().valueStream().map(i -> i.path("slug").asString()))
                .as("only the built-in integration is left").containsExactly("executor");
    }

    @Test
    void graphqlRoutes() {
        try (BooksGraphqlServer books = new BooksGraphqlServer()) {
            Map<String, Object> add = new LinkedHashMap<>();
            add.put("endpoint", books.endpoint());
            add.put("name", "Books");
            add.put("headers", Map.of("X-Contract", "header-secret"));
            JsonNode added = expect(api.post("/api/graphql/integrations", add), "post", "/graphql/integrations", 200);
            assertThat(added.path("slug").asString()).isEqualTo("127_0_0_1");
            assertThat(added.path("name").asString()).isEqualTo("Books");
            expectError(api.post("/api/graphql/integrations", add), "post", "/graphql/integrations", 409, "IntegrationAlreadyExistsError");
            expectError(api.post("/api/graphql/integrations", Map.of("endpoint", books.notGraphql(), "slug", "html")),
                    "post", "/graphql/integrations", 400, "GraphqlIntrospectionError");
            expectError(api.post("/api/graphql/integrations", Map.of("endpoint", books.endpoint(), "slug", "bad",
                    "introspectionJson", "{\"data\": {\"__schema\": {\"types\": []}}}")), "post", "/graphql/integrations", 400,
                    "GraphqlExtractionError");

            Reply got = api.get("/api/graphql/integrations/127_0_0_1");
            assertThat(expect(got, "get", "/graphql/integrations/{slug}", 200).path("endpoint").asString()).isEqualTo(books.endpoint());
            assertThat(got.body()).doesNotContain("header-secret");
            assertThat(expect(api.get("/api/graphql/integrations/no_such"), "get", "/graphql/integrations/{slug}", 200).isNull()).isTrue();

            Reply config = api.get("/api/graphql/integrations/127_0_0_1/config");
            JsonNode shown = expect(config, "get", "/graphql/integrations/{slug}/config", 200);
            assertThat(shown.path("name").asString()).isEqualTo("Books");
            assertThat(shown.path("headers").has("X-Contract")).isTrue();
            assertThat(config.body()).doesNotContain("header-secret");
            assertThat(expect(api.get("/api/graphql/integrations/no_such/config"), "get", "/graphql/integrations/{slug}/config", 200)
                    .isNull()).isTrue();

            JsonNode configured = expect(api.post("/api/graphql/integrations/127_0_0_1/config", Map.of("authenticationTemplate",
                            List.of(Map.of("kind", "none"), Map.of("slug", "bearer", "type", "apiKey",
                                    "headers", Map.of("Authorization", List.of("Bearer ", Map.of("type", "variable", "name", "token"))))))),
                    "post", "/graphql/integrations/{slug}/config", 200);
            assertThat(configured.path("authenticationTemplate").valueStream().map(t -> t.path("slug").asString()))
                    .containsExactly("none", "bearer");
            JsonNode oauth = expect(api.post("/api/graphql/integrations/127_0_0_1/config", Map.of("mode", "replace",
                            "authenticationTemplate", List.of(Map.of("kind", "oauth2", "slug", "oauth")))),
                    "post", "/graphql/integrations/{slug}/config", 200);
            assertThat(oauth.path("authenticationTemplate").valueStream().map(t -> t.path("kind").asString())).containsExactly("oauth2");
        }
    }

    @Test
    void executionAndPolicyRoutes() {
        expect(api.post("/api/mcp/servers", stdio("Run Fixture", "run-fixture")), "post", "/mcp/servers", 200);
        expect(api.post("/api/connections", TetherClient.defaultConnection("run-fixture")), "post", "/connections", 200);
        expect(api.post("/api/connections/org/run-fixture/default/refresh", null),
                "post", "/connections/{owner}/{integration}/{name}/refresh", 200);

        JsonNode completed = expect(api.post("/api/executions", Map.of("code", "return await tools['run-fixture'].org.default.echo({text: 'hi'})")),
                "post", "/executions", 200);
        assertThat(completed.path("structured").path("result").path("ok").asBoolean()).as(completed.toString()).isTrue();

        JsonNode policy = expect(api.post("/api/policies", Map.of("owner", "org", "pattern", "run-fixture.org.default.echo",
                "action", "require_approval")), "post", "/policies", 200);
        String policyId = policy.path("id").asString();
        assertThat(policy.path("position").asString()).isEqualTo("a0");
        JsonNode policies = expect(api.get("/api/policies"), "get", "/policies", 200);
        assertThat(policies.valueStream().map(p -> p.path("id").asString())).containsExactly(policyId);

        JsonNode paused = expect(api.post("/api/executions", Map.of("code", "return await tools['run-fixture'].org.default.echo({text: 'hi'})")),
                "post", "/executions", 200);
        assertThat(paused.path("status").asString()).isEqualTo("paused");
        String executionId = paused.path("structured").path("executionId").asString();
        expect(api.get("/api/executions/" + executionId), "get", "/executions/{executionId}", 200);
        JsonNode resumed = expect(api.post("/api/executions/" + executionId + "/resume", Map.of("action", "accept")),
                "post", "/executions/{executionId}/resume", 200);
        assertThat(resumed.path("status").asString()).isEqualTo("completed");
        expectError(api.get("/api/executions/" + executionId), "get", "/executions/{executionId}", 404, "ExecutionNotFoundError");
        expectError(api.post("/api/executions/" + executionId + "/resume", Map.of("action", "accept")),
                "post", "/executions/{executionId}/resume", 404, "ExecutionNotFoundError");

        JsonNode patched = expect(api.patch("/api/policies/" + policyId, Map.of("owner", "org", "action", "block")),
                "patch", "/policies/{policyId}", 200);
        assertThat(patched.path("action").asString()).isEqualTo("block");
        assertThat(expect(api.send("DELETE", "/api/policies/" + policyId, Map.of("owner", "org")), "delete", "/policies/{policyId}", 200)
                .path("removed").asBoolean()).isTrue();
        assertThat(api.get("/api/policies").json()).isEmpty();
    }

    /** Auth methods merged and replaced as Executor does; a refused body changes nothing stored. */
    @Test
    void mcpAuthRoute() {
        expect(api.post("/api/mcp/servers", Map.of("name", "Keyed", "endpoint", everythingEndpoint(),
                "auth", Map.of("kind", "header", "headerName", "X-Api-Key", "prefix", "Key "))), "post", "/mcp/servers", 200);
        JsonNode declared = expect(api.get("/api/integrations/keyed"), "get", "/integrations/{slug}", 200);
        assertThat(declared.path("authMethods").toString()).isEqualTo("[{\"id\":\"header\",\"label\":\"API key (X-Api-Key)\","
                + "\"kind\":\"apikey\",\"template\":\"header\",\"placements\":[{\"carrier\":\"header\",\"name\":\"X-Api-Key\",\"prefix\":\"Key \"}]}]");
        assertThat(declared.path("displayUrl").asString()).isEqualTo(everythingEndpoint());

        JsonNode merged = expect(api.post("/api/mcp/servers/keyed/auth", Map.of("authenticationTemplate", List.of(
                Map.of("slug", "header", "type", "apiKey", "label", "Team key",
                        "headers", Map.of("Authorization", List.of("Bearer ", Map.of("type", "variable", "name", "token")))),
                Map.of("kind", "none"), Map.of("kind", "oauth2", "slug", "oauth2")))), "post", "/mcp/servers/{slug}/auth", 200);
        assertThat(merged.toString().replaceAll("custom_[0-9a-z]+", "custom_")).isEqualTo("{\"authenticationTemplate\":["
                + "{\"slug\":\"header\",\"kind\":\"apikey\",\"label\":\"Team key\",\"placements\":[{\"carrier\":\"header\","
                + "\"name\":\"Authorization\",\"prefix\":\"Bearer \"}]},{\"slug\":\"custom_\",\"kind\":\"none\"},"
                + "{\"slug\":\"oauth2\",\"kind\":\"oauth2\"}]}");

        JsonNode replaced = expect(api.post("/api/mcp/servers/keyed/auth", Map.of("mode", "replace", "authenticationTemplate", List.of(
                Map.of("kind", "none"), Map.of("kind", "none"),
                Map.of("type", "apiKey", "queryParams", Map.of("token", List.of(Map.of("type", "variable", "name", "token"))))))),
                "post", "/mcp/servers/{slug}/auth", 200);
        assertThat(replaced.toString()).isEqualTo("{\"authenticationTemplate\":[{\"slug\":\"none\",\"kind\":\"none\"},"
                + "{\"slug\":\"none_2\",\"kind\":\"none\"},{\"slug\":\"query\",\"kind\":\"apikey\",\"placements\":"
                + "[{\"carrier\":\"query\",\"name\":\"token\"}]}]}");
        JsonNode server = api.get("/api/mcp/servers/keyed").json();
        assertThat(server.at("/config/authenticationTemplate")).isEqualTo(replaced.path("authenticationTemplate"));

        for (Object refused : List.of(Map.of(), Map.of("authenticationTemplate", List.of(Map.of("kind", "bogus"))),
                Map.of("authenticationTemplate", List.of(Map.of("type", "apiKey", "headers", Map.of("A",
                        List.of(Map.of("type", "variable", "name", "a"), "suffix"))))),
                Map.of("authenticationTemplate", List.of(), "mode", "sideways"))) {
            assertThat(api.post("/api/mcp/servers/keyed/auth", refused).status()).as(refused.toString()).isEqualTo(400);
        }
        assertThat(api.get("/api/mcp/servers/keyed").json()).as("refused bodies lose nothing stored").isEqualTo(server);

        expect(api.post("/api/mcp/servers", stdio("Auth Stdio", "auth-stdio")), "post", "/mcp/servers", 200);
        assertThat(expect(api.post("/api/mcp/servers/auth-stdio/auth", Map.of("authenticationTemplate", List.of(Map.of("kind", "none")))),
                "post", "/mcp/servers/{slug}/auth", 200).toString()).isEqualTo("{\"authenticationTemplate\":[]}");
        assertThat(expect(api.post("/api/mcp/servers/nope/auth", Map.of("authenticationTemplate", List.of())),
                "post", "/mcp/servers/{slug}/auth", 200).toString()).isEqualTo("{\"authenticationTemplate\":[]}");
    }

    @Test
    void providerRoutes() {
        JsonNode providers = expect(api.get("/api/providers"), "get", "/providers", 200);
        assertThat(providers.toString()).isEqualTo("[\"file\",\"onepassword\"]");
        assertThat(expect(api.get("/api/providers/file/items"), "get", "/providers/{key}/items", 200)).isEmpty();

        expect(api.post("/api/mcp/servers", stdio("Provider Fixture", "provider-fixture")), "post", "/mcp/servers", 200);
        expect(api.post("/api/connections", Map.of("owner", "org", "name", "keyed", "integration", "provider-fixture",
                "template", "token", "value", "provider-secret-value")), "post", "/connections", 200);
        JsonNode items = expect(api.get("/api/providers/file/items"), "get", "/providers/{key}/items", 200);
        assertThat(items.toString()).isEqualTo("[{\"id\":\"connection:org:provider-fixture:keyed:token\","
                + "\"name\":\"connection:org:provider-fixture:keyed:token\"}]");
        assertThat(expect(api.get("/api/providers/onepassword/items"), "get", "/providers/{key}/items", 200)).isEmpty();
        assertThat(expect(api.get("/api/providers/nope/items"), "get", "/providers/{key}/items", 200)).isEmpty();
    }

    @Test
    void onePasswordRoutesWithoutABinding() {
        api.send("DELETE", "/api/onepassword/config", null);
        assertThat(expect(api.get("/api/onepassword/config"), "get", "/onepassword/config", 200).isNull()).isTrue();
        assertThat(expect(api.get("/api/onepassword/status"), "get", "/onepassword/status", 200).toString())
                .isEqualTo("{\"connected\":false,\"error\":\"Not configured\"}");
        JsonNode failed = expectError(api.get("/api/onepassword/vaults?authKind=service-account&account=not-a-token"),
                "get", "/onepassword/vaults", 502, "OnePasswordError");
        assertThat(failed.toString()).isEqualTo("{\"_tag\":\"OnePasswordError\",\"operation\":\"vault listing\","
                + "\"message\":\"1Password CLI vault listing failed\"}");
        expectNoContent(api.send("DELETE", "/api/onepassword/config", null), "delete", "/onepassword/config");
    }

    @Test
    void onePasswordRoutesThroughTheCli() {
        Map<String, Object> binding = Map.of("auth", Map.of("kind", "service-account", "token", StandInOp.TOKEN), "vaultId", "v2",
                "name", "Team vault");
        expectNoContent(api.send("PUT", "/api/onepassword/config", binding), "put", "/onepassword/config");
        JsonNode config = expect(api.get("/api/onepassword/config"), "get", "/onepassword/config", 200);
        assertThat(config.toString()).isEqualTo("{\"auth\":{\"kind\":\"service-account\"},\"vaultId\":\"v2\",\"name\":\"Team vault\"}");
        assertThat(expect(api.get("/api/onepassword/status"), "get", "/onepassword/status", 200).toString())
                .isEqualTo("{\"connected\":true,\"vaultName\":\"Beta\"}");
        assertThat(expect(api.get("/api/onepassword/vaults?authKind=desktop-app&account=" + StandInOp.ACCOUNT),
                "get", "/onepassword/vaults", 200).toString())
                .isEqualTo("{\"vaults\":[{\"id\":\"v1\",\"name\":\"Alpha\"},{\"id\":\"v2\",\"name\":\"Beta\"}]}");
        expectError(api.get("/api/onepassword/vaults?authKind=desktop-app&account=someone.else"), "get", "/onepassword/vaults", 502,
                "OnePasswordError");

        // 1.5.9 declares no 400 body here (it answers an empty one): Tether's own decode error names the field.
        Reply refused = api.send("PUT", "/api/onepassword/config", Map.of("auth", Map.of("kind", "desktop-app"), "vaultId", "v9", "name", "x"));
        assertThat(refused.status()).isEqualTo(400);
        assertThat(refused.json().path("_tag").asString()).isEqualTo("HttpApiDecodeError");
        assertThat(refused.json().path("message").asString()).contains("accountName");
        assertThat(api.get("/api/onepassword/config").json()).as("a refused binding loses nothing stored").isEqualTo(config);

        expectNoContent(api.send("DELETE", "/api/onepassword/config", null), "delete", "/onepassword/config");
        assertThat(api.get("/api/onepassword/config").json().isNull()).isTrue();
    }

    @Test
    void detectRoute() {
        JsonNode mcp = expect(api.post("/api/integrations/detect", Map.of("url", " " + everythingEndpoint() + " ")),
                "post", "/integrations/detect", 200);
        assertThat(mcp.toString()).isEqualTo("[{\"kind\":\"mcp\",\"confidence\":\"high\",\"endpoint\":\"" + everythingEndpoint()
                + "\",\"name\":\"127.0.0.1\",\"slug\":\"127_0_0_1\"}]");
        int closed = Fixture.freeLoopbackPort();
        assertThat(expect(api.post("/api/integrations/detect", Map.of("url", "http://127.0.0.1:" + closed + "/mcp")),
                "post", "/integrations/detect", 200).toString())
                .isEqualTo("[{\"kind\":\"mcp\",\"confidence\":\"low\",\"endpoint\":\"http://127.0.0.1:" + closed
                        + "/mcp\",\"name\":\"127.0.0.1\",\"slug\":\"127_0_0_1\"}]");
        assertThat(expect(api.post("/api/integrations/detect", Map.of("url", "http://127.0.0.1:" + port + "/api/integrations")),
                "post", "/integrations/detect", 200)).isEmpty();
        assertThat(expect(api.post("/api/integrations/detect", Map.of("url", "not a url")), "post", "/integrations/detect", 200)).isEmpty();
        assertThat(api.post("/api/integrations/detect", Map.of()).status()).isEqualTo(400);
        assertThat(api.post("/api/integrations/detect", Map.of("url", 5)).json().path("_tag").asString()).isEqualTo("HttpApiDecodeError");
    }

    // ---- helpers ---------------------------------------------------------------------------

    /** Asserts the status, validates the body against 1.5.9's schema for route and status, and returns it. */
    private static JsonNode expect(Reply reply, String method, String route, int status) {
        JsonNode body = json(reply, status);
        DRIVEN.add(method + " " + route);
        executor.assertConforms(method, route, status, isConnectionRoute(route) ? withoutLastHealth(body) : body);
        return body;
    }

    /** A route whose success has no body in 1.5.9 (a 200 with nothing in it). */
    private static void expectNoContent(Reply reply, String method, String route) {
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        assertThat(reply.body()).as(reply.toString()).isEmpty();
        DRIVEN.add(method + " " + route);
    }

    /** As {@link #expect}, for an error: its {@code _tag} too. */
    private static JsonNode expectError(Reply reply, String method, String route, int status, String tag) {
        JsonNode body = expect(reply, method, route, status);
        assertThat(body.path("_tag").asString()).as(reply.toString()).isEqualTo(tag);
        return body;
    }

    private static JsonNode json(Reply reply, int status) {
        assertThat(reply.status()).as(reply.toString()).isEqualTo(status);
        assertThat(reply.header("content-type")).as(reply.toString()).hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        return reply.json();
    }

    private static boolean isConnectionRoute(String route) {
        return route.equals("/connections") || route.equals("/connections/{owner}/{integration}/{name}");
    }

    /**
     * The one deliberate difference to 1.5.9: connections carry {@code lastHealth}, the persisted verdict of the health
     * check that later 1.5.x daemons added (see executor-api.md), while 1.5.9's connection schema is closed
     * ({@code additionalProperties: false}). Exactly that field is removed before validating; everything else must match.
     */
    private static JsonNode withoutLastHealth(JsonNode body) {
        JsonNode copy = body.deepCopy();
        if (copy.isArray()) {
            copy.forEach(connection -> ((ObjectNode) connection).remove("lastHealth"));
        }
        else if (copy.isObject() && !copy.has("_tag")) {
            ((ObjectNode) copy).remove("lastHealth");
        }
        return copy;
    }

    /** A stdio registration of the fixture, marked with this class's run so the OS finds its children. */
    private static Map<String, Object> stdio(String name, String slug) {
        List<String> command = Fixture.command("--run=" + RUN);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("transport", "stdio");
        body.put("name", name);
        if (slug != null) {
            body.put("slug", slug);
        }
        body.put("command", command.get(0));
        body.put("args", new ArrayList<>(command.subList(1, command.size())));
        return body;
    }

    private static String everythingEndpoint() {
        return "http://127.0.0.1:" + everythingPort + "/mcp";
    }

    /** server-everything in streamable-HTTP mode, up once its port accepts connections. */
    static Process startHttpEverything(int port, Path log) {
        try {
            Process process = Fixture.everything(EverythingTransport.STREAMABLE_HTTP, port)
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline) {
                if (!process.isAlive()) {
                    fail("server-everything exited with " + process.exitValue() + ": " + Files.readString(log));
                }
                try (Socket socket = new Socket()) {
                    socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
                    return process;
                }
                catch (IOException notYet) {
                    Thread.sleep(100);
                }
            }
            stop(process);
            fail("server-everything did not listen on " + port + " within 30 s: " + Files.readString(log));
            return process;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    static void stop(Process process) {
        if (process == null) {
            return;
        }
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
