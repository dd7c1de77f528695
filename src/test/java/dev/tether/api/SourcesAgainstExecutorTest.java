package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
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

import dev.tether.api.ApiClient.Reply;
import dev.tether.testsupport.BooksGraphqlServer;
import dev.tether.testsupport.DiscoveryDocumentServer;
import dev.tether.testsupport.OAuthExampleServer;
import dev.tether.testsupport.RealExecutor;

/**
 * OpenAPI, GraphQL and OAuth against the real Executor 1.5.9 daemon. The built-ins that are twins of routes ({@code executor.coreTools.oauth.*}, {@code executor.openapi.previewSpec}
 * and {@code addSpec}, {@code executor.graphql.getIntegration} and {@code addIntegration}) called from code through
 * {@code POST /api/executions}, the same code sent to the real Executor 1.5.9 daemon: where both can answer, the
 * answers are the same. Detection, sent the same URLs, answers the same. Executor's own API is a source of Tether.
 * The servers behind them are real: a GraphQL server, the MCP SDK's OAuth example, Executor.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + SourcesAgainstExecutorTest.TOKEN, "tether.docker.reap-interval=1h" })
@DirtiesContext
@InProcess
class SourcesAgainstExecutorTest {

    static final String TOKEN = "source-builtins-token";
    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final String SPEC = """
            {"openapi": "3.0.0", "info": {"title": "Pets", "version": "1.0"}, "servers": [{"url": "http://127.0.0.1:9/v1"}],
             "paths": {"/pets": {
               "get": {"operationId": "listPets", "tags": ["pets"], "responses": {"200": {"description": "ok"}}},
               "post": {"operationId": "addPet", "tags": ["pets"], "responses": {"200": {"description": "ok"}}}}},
             "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}}}}""";

    @TempDir
    static Path dataDir;

    private static RealExecutor executor;
    private static BooksGraphqlServer books;
    private static OAuthExampleServer example;

    @LocalServerPort
    int port;

    private ApiClient tether;
    private ApiClient real;
    private final Browser browser = new Browser();

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", () -> dataDir.resolve("tether").toString());
    }

    @BeforeAll
    static void servers() throws IOException, InterruptedException {
        executor = RealExecutor.start(dataDir, TOKEN, "SourcesAgainstExecutorTest");
        books = new BooksGraphqlServer();
        example = OAuthExampleServer.start(dataDir.resolve("oauth-example.log"));
    }

    @AfterAll
    static void stopServers() {
        for (AutoCloseable server : new AutoCloseable[] { example, books, executor }) {
            try {
                if (server != null) {
                    server.close();
                }
            }
            catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
        }
    }

    @BeforeEach
    void clients() {
        tether = new ApiClient(port, TOKEN);
        real = new ApiClient(executor.port(), TOKEN);
    }

    @Test
    void openApiBuiltinsPreviewAndAddAsExecutorsDo() {
        String preview = "return await tools.executor.openapi.previewSpec({spec: " + quoted(SPEC) + "})";
        JsonNode previewed = same(preview);
        assertThat(previewed.path("ok").asBoolean()).as(previewed.toString()).isTrue();
        assertThat(previewed.at("/data/operationCount").asInt()).isEqualTo(2);

        JsonNode refused = result(tether, "return await tools.executor.openapi.previewSpec({spec: 'not a spec'})");
        assertThat(refused.at("/error/code").asString()).as(refused.toString())
                .isEqualTo(result(real, "return await tools.executor.openapi.previewSpec({spec: 'not a spec'})").at("/error/code").asString())
                .isEqualTo("openapi_parse_failed");

        String add = "return await tools.executor.openapi.addSpec({spec: {kind: 'blob', value: " + quoted(SPEC) + "}, slug: 'pets'})";
        JsonNode added = sameAfterApproval(add, "Add an OpenAPI integration");
        assertThat(added.toString()).isEqualTo("{\"ok\":true,\"data\":{\"slug\":\"pets\",\"toolCount\":2}}");
        assertThat(tether.get("/api/openapi/integrations/pets").json().path("kind").asString()).isEqualTo("openapi");
        JsonNode integrations = result(tether, "return await tools.executor.coreTools.integrations.list({})");
        assertThat(integrations.at("/data/integrations").valueStream().map(i -> i.path("slug").asString() + ":" + i.path("kind").asString()))
                .contains("pets:openapi");
        JsonNode again = approved(tether, add);
        assertThat(again.toString()).isEqualTo(approved(real, add).toString())
                .isEqualTo("{\"ok\":false,\"error\":{\"code\":\"integration_already_exists\","
                        + "\"message\":\"Integration pets already exists; update it instead of re-adding.\"}}");

        JsonNode wrong = result(tether, "return await tools.executor.openapi.previewSpec({})");
        assertThat(wrong.at("/error/code").asString()).as(wrong.toString()).isEqualTo("invalid_tool_arguments");
    }

    @Test
    void graphqlBuiltinsInspectAndAddAsExecutorsDo() {
        assertThat(same("return await tools.executor.graphql.getIntegration({slug: 'nowhere'})").toString())
                .isEqualTo("{\"ok\":true,\"data\":{\"integration\":null}}");

        String add = "return await tools.executor.graphql.addIntegration({endpoint: '" + books.endpoint() + "', slug: 'books'})";
        JsonNode added = sameAfterApproval(add, "Add a GraphQL integration");
        assertThat(added.toString()).isEqualTo("{\"ok\":true,\"data\":{\"slug\":\"books\",\"name\":\"127_0_0_1\"}}");

        JsonNode inspected = result(tether, "return await tools.executor.graphql.getIntegration({slug: 'books'})");
        assertThat(inspected.at("/data/integration/endpoint").asString()).as(inspected.toString()).isEqualTo(books.endpoint());
        assertThat(inspected.at("/data/integration/name").asString()).isEqualTo("127_0_0_1");

        String notGraphql = "return await tools.executor.graphql.addIntegration({endpoint: '" + books.notGraphql() + "', slug: 'html'})";
        // Executor 1.5.9 stores such an endpoint as an integration without tools; Tether refuses it, as its route does.
        JsonNode refused = approved(tether, notGraphql);
        assertThat(refused.at("/error/code").asString()).as(refused.toString()).isEqualTo("graphql_introspection_failed");
        assertThat(refused.at("/error/message").asString()).startsWith("Not a GraphQL endpoint");
        assertThat(tether.get("/api/integrations/html").status()).as("nothing is stored").isEqualTo(404);
    }

    /** A real Discovery document added to both as {@code googleDiscovery}: the same tools, approvals and OAuth template. */
    @Test
    void aGoogleDiscoveryDocumentBecomesTheToolsExecutorMakesOfIt() {
        try (DiscoveryDocumentServer google = new DiscoveryDocumentServer()) {
            Map<String, Object> add = Map.of("spec", Map.of("kind", "googleDiscovery", "url", google.url()), "slug", "google_oauth2");
            for (ApiClient daemon : List.of(real, tether)) {
                Reply added = daemon.post("/api/openapi/specs", add);
                assertThat(added.status()).as(added.toString()).isEqualTo(200);
                assertThat(added.json().toString()).isEqualTo("{\"slug\":\"google_oauth2\",\"toolCount\":4}");
                Reply connected = daemon.post("/api/connections", Map.of("owner", "org", "name", "default", "integration", "google_oauth2",
                        "template", "none", "values", Map.of()));
                assertThat(connected.status()).as(connected.toString()).isEqualTo(200);
            }
            assertThat(toolsOf(tether, "google_oauth2")).as("Tether's tools against Executor's").isEqualTo(toolsOf(real, "google_oauth2"))
                    .containsExactly("getCertForOpenIdConnect GET /oauth2/v2/certs approval:false",
                            "tokeninfo POST /oauth2/v2/tokeninfo approval:true POST /oauth2/v2/tokeninfo",
                            "userinfo.get GET /oauth2/v2/userinfo approval:false",
                            "userinfo.v2.me.get GET /userinfo/v2/me approval:false");
            String template = "/api/openapi/integrations/google_oauth2/config";
            assertThat(tether.get(template).json().path("authenticationTemplate").toString())
                    .isEqualTo(real.get(template).json().path("authenticationTemplate").toString()).contains("\"slug\":\"googleOAuth2\"");
        }
    }

    /** Each tool as {@code name description approval:<requiresApproval> [approvalDescription]}, sorted. */
    private static List<String> toolsOf(ApiClient daemon, String integration) {
        return daemon.get("/api/tools?integration=" + integration + "&includeAnnotations=true").json().valueStream()
                .map(tool -> (tool.path("name").asString() + " " + tool.path("description").asString() + " approval:"
                        + tool.path("requiresApproval").asBoolean() + " " + tool.path("approvalDescription").asString("")).strip())
                .sorted().toList();
    }

    @Test
    void oauthBuiltinsManageClientsAndFlowsAsExecutorsDo() {
        String create = "return await tools.executor.coreTools.oauth.clients.create({owner: 'user', slug: 'manual', "
                + "authorizationUrl: 'https://auth.example/authorize', tokenUrl: 'https://auth.example/token', "
                + "grant: 'authorization_code', clientId: 'id-1', clientSecret: 'hush', resource: 'https://api.example'})";
        assertThat(same(create).toString()).isEqualTo("{\"ok\":true,\"data\":{\"client\":\"manual\"}}");
        String list = "return await tools.executor.coreTools.oauth.clients.list({})";
        JsonNode listed = client(result(tether, list), "manual");
        assertThat(listed.toString()).isEqualTo(client(result(real, list), "manual").toString())
                .isEqualTo("{\"owner\":\"user\",\"slug\":\"manual\",\"grant\":\"authorization_code\","
                        + "\"authorizationUrl\":\"https://auth.example/authorize\",\"tokenUrl\":\"https://auth.example/token\","
                        + "\"resource\":\"https://api.example\",\"clientId\":\"id-1\"}");

        String start = "return await tools.executor.coreTools.oauth.start({client: 'manual', clientOwner: 'user', owner: 'user', "
                + "name: 'main', integration: 'api', template: 'oauth2'})";
        JsonNode ours = result(tether, start);
        JsonNode theirs = result(real, start);
        assertThat(ours.at("/data/status").asString()).as(ours.toString()).isEqualTo(theirs.at("/data/status").asString()).isEqualTo("redirect");
        URI authorization = URI.create(ours.at("/data/authorizationUrl").asString());
        assertThat(authorization.getHost()).isEqualTo("auth.example");
        assertThat(parameters(authorization)).containsAllEntriesOf(Map.of("client_id", "id-1", "response_type", "code",
                "code_challenge_method", "S256", "state", ours.at("/data/state").asString(),
                "redirect_uri", "http://127.0.0.1:" + port + "/api/oauth/callback"));
        assertThat(parameters(authorization).keySet()).containsAll(parameters(URI.create(theirs.at("/data/authorizationUrl").asString())).keySet());

        String cancel = "return await tools.executor.coreTools.oauth.cancel({state: '" + ours.at("/data/state").asString() + "'})";
        assertThat(result(tether, cancel).toString()).isEqualTo("{\"ok\":true,\"data\":{\"cancelled\":true}}");
        assertThat(tether.post("/api/oauth/complete", Map.of("state", ours.at("/data/state").asString(), "code", "c")).status())
                .as("a cancelled flow cannot be completed").isEqualTo(404);

        String remove = "return await tools.executor.coreTools.oauth.clients.remove({owner: 'user', slug: 'manual'})";
        assertThat(same(remove).toString()).isEqualTo("{\"ok\":true,\"data\":{\"removed\":true}}");
        assertThat(client(result(tether, list), "manual")).isNull();
        assertThat(client(result(real, list), "manual")).isNull();

        JsonNode missing = result(tether, "return await tools.executor.coreTools.oauth.cancel({})");
        assertThat(missing.at("/error/code").asString()).as(missing.toString()).isEqualTo("invalid_tool_arguments");
    }

    /** Probe, dynamic registration and start from code; the browser step as a browser does it; then the connection is there. */
    @Test
    void aRemoteServerIsAuthorizedFromCode() {
        Reply server = tether.post("/api/mcp/servers", Map.of("name", "OAuth Demo", "endpoint", example.mcpUrl(),
                "remoteTransport", "streamable-http"));
        assertThat(server.status()).as(server.toString()).isEqualTo(200);
        String slug = server.json().path("slug").asString();

        String probe = "return await tools.executor.coreTools.oauth.probe({url: '" + example.mcpUrl() + "'})";
        JsonNode probed = same(probe);
        assertThat(probed.at("/data/authorizationUrl").asString()).as(probed.toString()).isEqualTo(example.authorizationServer() + "/authorize");

        JsonNode data = probed.path("data");
        String register = "return await tools.executor.coreTools.oauth.clients.registerDynamic({owner: 'user', slug: 'demo', "
                + "registrationEndpoint: '" + data.path("registrationEndpoint").asString() + "', "
                + "authorizationUrl: '" + data.path("authorizationUrl").asString() + "', tokenUrl: '" + data.path("tokenUrl").asString() + "', "
                + "resource: '" + data.path("resource").asString() + "', scopes: [], originIntegration: '" + slug + "'})";
        assertThat(result(tether, register).toString()).isEqualTo("{\"ok\":true,\"data\":{\"client\":\"demo\"}}");

        JsonNode started = result(tether, "return await tools.executor.coreTools.oauth.start({client: 'demo', clientOwner: 'user', "
                + "owner: 'user', name: 'main', integration: '" + slug + "', template: 'oauth2'})");
        URI back = URI.create(browser.location(URI.create(started.at("/data/authorizationUrl").asString())));
        assertThat(back.getPath()).isEqualTo("/api/oauth/callback");
        HttpResponse<String> page = browser.get(URI.create("http://127.0.0.1:" + port + "/api/oauth/callback?" + back.getRawQuery()));
        assertThat(page.body()).contains("\"ok\":true");

        JsonNode connections = result(tether, "return await tools.executor.coreTools.connections.list({integration: '" + slug + "'})");
        assertThat(connections.at("/data/connections/0/oauthClient").asString()).as(connections.toString()).isEqualTo("demo");
        assertThat(connections.at("/data/connections/0/template").asString()).isEqualTo("oauth2");
        JsonNode refreshed = result(tether, "return await tools.executor.coreTools.connections.refresh({owner: 'user', integration: '"
                + slug + "', name: 'main'})");
        assertThat(refreshed.at("/data/tools").valueStream().map(tool -> tool.path("name").asString())).as(refreshed.toString()).contains("greet");
        JsonNode greeting = result(tether, "return await tools." + slug + ".user.main.greet({name: 'code'})");
        assertThat(greeting.toString()).contains("Hello, code!");
    }

    /** The listed OAuth client with this slug, null when there is none. */
    private static JsonNode client(JsonNode listed, String slug) {
        return listed.at("/data/clients").valueStream().filter(client -> client.path("slug").asString().equals(slug)).findFirst().orElse(null);
    }

    /** OpenAPI and GraphQL recognised as Executor's plugins recognise them, the same URLs sent to both daemons. */
    @Test
    void detectRecognisesSpecsAndGraphqlEndpointsAsExecutorDoes() {
        String spec = "http://127.0.0.1:" + port + "/api/docs";
        String unreachableGraphql = "http://127.0.0.1:9/graphql";
        for (String url : List.of(books.endpoint(), spec, unreachableGraphql, books.notGraphql())) {
            Reply ours = tether.post("/api/integrations/detect", Map.of("url", url));
            Reply theirs = real.post("/api/integrations/detect", Map.of("url", url));
            assertThat(ours.status()).as(ours.toString()).isEqualTo(200);
            assertThat(ours.json()).as(url).isEqualTo(theirs.json());
        }
        assertThat(tether.post("/api/integrations/detect", Map.of("url", books.endpoint())).json().toString())
                .isEqualTo("[{\"kind\":\"graphql\",\"confidence\":\"high\",\"endpoint\":\"" + books.endpoint()
                        + "\",\"name\":\"127_0_0_1\",\"slug\":\"127_0_0_1\"}]");
        JsonNode detected = tether.post("/api/integrations/detect", Map.of("url", spec)).json();
        assertThat(detected.toString()).as("Tether's own spec").isEqualTo("[{\"kind\":\"openapi\",\"confidence\":\"high\",\"endpoint\":\""
                + spec + "\",\"name\":\"" + detected.at("/0/name").asString() + "\",\"slug\":\"" + detected.at("/0/slug").asString() + "\"}]");
        assertThat(tether.post("/api/integrations/detect", Map.of("url", unreachableGraphql)).json().at("/0/confidence").asString())
                .isEqualTo("low");
        JsonNode fromCode = result(tether, "return await tools.executor.coreTools.integrations.detect({url: '" + books.endpoint() + "'})");
        assertThat(fromCode.at("/data/results/0/kind").asString()).as(fromCode.toString()).isEqualTo("graphql");
    }

    /**
     * The real Executor daemon's API as an OpenAPI source of Tether: the spec its {@code /api/docs} page carries,
     * added with a bearer template and Executor's token as the connection's value, then called from code.
     */
    @Test
    void executorsOwnApiIsASourceOfTether() {
        Reply docs = real.get("/api/docs");
        assertThat(docs.status()).isEqualTo(200);
        String page = docs.body();
        int open = page.indexOf('>', page.indexOf("<script id=\"swagger-spec\""));
        String spec = page.substring(open + 1, page.indexOf("</script>", open)).strip();

        Reply added = tether.post("/api/openapi/specs", Map.of("spec", Map.of("kind", "blob", "value", spec), "slug", "executor_api",
                "baseUrl", executor.baseUrl() + "/api",
                "authenticationTemplate", List.of(Map.of("slug", "bearer", "type", "apiKey",
                        "headers", Map.of("Authorization", List.of("Bearer ", Map.of("type", "variable", "name", "token")))))));
        assertThat(added.status()).as(added.toString()).isEqualTo(200);
        assertThat(added.json().path("toolCount").asInt()).isGreaterThan(20);
        Reply connected = tether.post("/api/connections", Map.of("owner", "org", "name", "default", "integration", "executor_api",
                "template", "bearer", "value", TOKEN));
        assertThat(connected.status()).as(connected.toString()).isEqualTo(200);

        JsonNode tools = tether.get("/api/tools?integration=executor_api").json();
        String list = tools.valueStream().map(tool -> tool.path("address").asString())
                .filter(address -> address.endsWith(".integrations.list")).findFirst().orElseThrow(() -> new AssertionError(tools.toString()));
        JsonNode listed = result(tether, "return await " + list + "({})");
        assertThat(listed.path("ok").asBoolean()).as(listed.toString()).isTrue();
        assertThat(listed.at("/http/status").asInt()).isEqualTo(200);
        assertThat(listed.path("data")).as("Executor's own answer").isEqualTo(real.get("/api/integrations").json());
    }

    /** The same code on both daemons: the same completed result, which is returned. */
    private JsonNode same(String code) {
        JsonNode ours = result(tether, code);
        assertThat(ours.toString()).as(code).isEqualTo(result(real, code).toString());
        return ours;
    }

    /** The same code on both daemons pauses with the same approval prompt; accepted, both answer the same. */
    private JsonNode sameAfterApproval(String code, String prompt) {
        JsonNode ours = approved(tether, code, prompt);
        assertThat(ours.toString()).as(code).isEqualTo(approved(real, code, prompt).toString());
        return ours;
    }

    private static JsonNode approved(ApiClient daemon, String code) {
        return approved(daemon, code, null);
    }

    private static JsonNode approved(ApiClient daemon, String code, String prompt) {
        Reply paused = daemon.post("/api/executions", Map.of("code", code));
        assertThat(paused.status()).as(paused.toString()).isEqualTo(200);
        assertThat(paused.json().path("status").asString()).as(paused.toString()).isEqualTo("paused");
        if (prompt != null) {
            assertThat(paused.json().at("/structured/interaction/message").asString()).startsWith(prompt + "\n\nArguments:\n");
        }
        String id = paused.json().at("/structured/executionId").asString();
        Reply resumed = daemon.post("/api/executions/" + id + "/resume", Map.of("action", "accept", "content", Map.of()));
        assertThat(resumed.status()).as(resumed.toString()).isEqualTo(200);
        assertThat(resumed.json().at("/structured/status").asString()).as(resumed.toString()).isEqualTo("completed");
        return resumed.json().at("/structured/result");
    }

    private static JsonNode result(ApiClient daemon, String code) {
        Reply reply = daemon.post("/api/executions", Map.of("code", code));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        assertThat(reply.json().at("/structured/status").asString()).as(code + "\n" + reply).isEqualTo("completed");
        return reply.json().at("/structured/result");
    }

    private static String quoted(String text) {
        return ApiClient.JSON.writeValueAsString(text);
    }

    private static Map<String, String> parameters(URI uri) {
        return Arrays.stream(uri.getRawQuery().split("&")).map(pair -> pair.split("=", 2))
                .collect(Collectors.toMap(pair -> pair[0],
                        pair -> java.net.URLDecoder.decode(pair[1], java.nio.charset.StandardCharsets.UTF_8), (a, b) -> a, LinkedHashMap::new));
    }

}
