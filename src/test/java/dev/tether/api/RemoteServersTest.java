package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.api.RecordingProxy.Seen;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.Fixture.EverythingTransport;
import dev.tether.api.input.ServerConfigs;

/**
 * Remote MCP servers end to end: the real {@code @modelcontextprotocol/server-everything}, started here in its
 * streamable-HTTP and its SSE mode on loopback, each reached through a {@link RecordingProxy} so the test sees
 * what arrives at the server. Registered over the API with each {@code remoteTransport}, then checked, synced,
 * listed, called and probed over HTTP as a client would; the integration's headers and query parameters and
 * the connection's credential values (request headers for a remote server) must reach the server.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + RemoteServersTest.TOKEN, "tether.docker.reap-interval=1h" })
@DirtiesContext
class RemoteServersTest {

    static final String TOKEN = "remote-servers-test-token";

    private static final Duration BOUND = Duration.ofSeconds(40);
    private static final Path DATA_DIR = temporaryDirectory("tether-remote-");
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Map<String, String> INTEGRATION_HEADERS = Map.of("X-Tether-Test", "from-integration");
    private static final Map<String, String> QUERY = Map.of("tenant", "acme", "region", "eu west");
    private static final String CREDENTIAL_HEADER = "X-Api-Key";
    private static final String CREDENTIAL_VALUE = "connection-credential-7";

    private static Everything streamable;
    private static Everything sse;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final List<String> registered = new ArrayList<>();
    private final List<RecordingProxy> proxies = new ArrayList<>();

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @BeforeAll
    static void startServers() throws Exception {
        streamable = Everything.start(EverythingTransport.STREAMABLE_HTTP);
        sse = Everything.start(EverythingTransport.SSE);
    }

    @AfterEach
    void removeIntegrations() throws Exception {
        // Ends the warm sessions (a DELETE for streamable HTTP, the closed stream for SSE) before the proxies go.
        for (String slug : registered) {
            send("DELETE", "/api/mcp/servers/" + slug, null);
        }
        for (RecordingProxy proxy : proxies) {
            proxy.close();
        }
    }

    @AfterAll
    static void stopServers() throws IOException {
        try {
            if (streamable != null) {
                streamable.close();
            }
        }
        finally {
            if (sse != null) {
                sse.close();
            }
            delete(DATA_DIR);
        }
    }

    @Test
    void streamableHttpServerIsCheckedSyncedListedAndCalledWithItsHeadersAndQuery() throws Exception {
        RecordingProxy proxy = proxy(streamable);
        String slug = register("Everything streamable", proxy.url() + "/mcp", "streamable-http");
        String address = connectAndExercise(slug);

        List<Seen> seen = proxy.seen();
        assertThat(seen).as("requests at the server").isNotEmpty()
                .allSatisfy(request -> assertThat(request.path()).isEqualTo("/mcp"))
                .anySatisfy(request -> assertThat(request.method()).isEqualTo("POST"));
        assertEveryRequestCarriesConfigAndCredential(seen);
        assertThat(address).isEqualTo("tools." + slug + ".user.alice.echo");
    }

    @Test
    void sseServerIsCheckedSyncedListedAndCalledWithItsHeadersAndQuery() throws Exception {
        RecordingProxy proxy = proxy(sse);
        String slug = register("Everything sse", proxy.url() + "/sse", "sse");
        connectAndExercise(slug);

        List<Seen> seen = proxy.seen();
        assertThat(seen.get(0).method() + " " + seen.get(0).path()).as("the SSE stream is opened first: " + seen).isEqualTo("GET /sse");
        assertThat(seen.get(0).query()).containsAllEntriesOf(QUERY);
        assertThat(seen).as("requests at the server").allSatisfy(request -> {
            assertThat(request.path()).isIn("/sse", "/message");
            assertThat(request.header("X-Tether-Test")).contains("from-integration");
            assertThat(request.header(CREDENTIAL_HEADER)).contains(CREDENTIAL_VALUE);
        });
        assertThat(seen).filteredOn(request -> request.path().equals("/message")).as("messages posted")
                .isNotEmpty()
                .allSatisfy(request -> assertThat(request.query()).containsKey("sessionId"));
    }

    @Test
    void autoFallsBackToSseWhenTheServerDoesNotSpeakStreamableHttp() throws Exception {
        RecordingProxy proxy = proxy(sse);
        String slug = register("Everything auto sse", proxy.url() + "/sse", "auto");
        connectAndExercise(slug);

        List<Seen> seen = proxy.seen();
        assertThat(seen.get(0).method() + " " + seen.get(0).path()).as("streamable HTTP is tried first: " + seen).isEqualTo("POST /sse");
        assertThat(seen).as("then SSE: " + seen)
                .anySatisfy(request -> assertThat(request.method() + " " + request.path()).isEqualTo("GET /sse"))
                .anySatisfy(request -> assertThat(request.method() + " " + request.path()).isEqualTo("POST /message"));
        assertThat(seen).filteredOn(request -> request.method().equals("GET")).allSatisfy(request -> {
            assertThat(request.query()).containsAllEntriesOf(QUERY);
            assertThat(request.header("X-Tether-Test")).contains("from-integration");
            assertThat(request.header(CREDENTIAL_HEADER)).contains(CREDENTIAL_VALUE);
        });
    }

    @Test
    void autoUsesStreamableHttpWhenTheServerSpeaksIt() throws Exception {
        RecordingProxy proxy = proxy(streamable);
        String slug = register("Everything auto streamable", proxy.url() + "/mcp", "auto");
        connectAndExercise(slug);

        List<Seen> seen = proxy.seen();
        assertThat(seen.get(0).method()).as("the first request is streamable HTTP's initialize POST").isEqualTo("POST");
        assertThat(seen).as("no SSE transport ever connected: every GET is a streamable session's stream: " + seen)
                .allSatisfy(request -> {
                    assertThat(request.path()).isEqualTo("/mcp");
                    if (request.method().equals("GET")) {
                        assertThat(request.header("mcp-session-id")).isPresent();
                    }
                });
        assertEveryRequestCarriesConfigAndCredential(seen);
    }

    @Test
    void probeConnectsOverEitherTransportWithHeadersAndQuery() throws Exception {
        for (Everything server : List.of(streamable, sse)) {
            RecordingProxy proxy = proxy(server);
            String endpoint = proxy.url() + (server == streamable ? "/mcp" : "/sse");
            JsonNode probe = ok(send("POST", "/api/mcp/probe", Map.of("endpoint", endpoint,
                    "headers", Map.of("X-Probe", "probe-header"), "queryParams", Map.of("probe", "yes"))));

            assertThat(probe.path("connected").asBoolean()).as(probe.toString()).isTrue();
            assertThat(probe.path("requiresAuthentication").asBoolean()).isFalse();
            assertThat(probe.path("serverName").asString()).isEqualTo("mcp-servers/everything");
            assertThat(probe.path("name").asString()).isEqualTo("mcp-servers/everything");
            assertThat(probe.path("slug").asString()).isEqualTo("mcp_servers_everything");
            assertThat(probe.path("toolCount").asInt()).as(probe.toString()).isGreaterThanOrEqualTo(10);
            assertThat(proxy.seen()).as("probe requests at " + endpoint).isNotEmpty()
                    .allSatisfy(request -> assertThat(request.header("X-Probe")).contains("probe-header"))
                    .anySatisfy(request -> assertThat(request.query()).containsEntry("probe", "yes"));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = { "streamable-http", "sse", "auto" })
    void unreachableEndpointIsDegradedWithAClearDetailAndFailsAProbe(String remoteTransport) throws Exception {
        try (Fixture.RefusingPort refusing = Fixture.refusingLoopbackPort()) {
            assertUnreachable(refusing.endpoint(), remoteTransport);
        }
    }

    private void assertUnreachable(String nowhere, String remoteTransport) throws Exception {
        String slug = register("Nowhere " + remoteTransport, nowhere, remoteTransport);

        JsonNode verdict = ok(send("POST", "/api/connections/org/" + slug + "/default/health", null));
        assertThat(verdict.path("status").asString()).as(verdict.toString()).isEqualTo("degraded");
        assertThat(verdict.path("detail").asString()).as(verdict.toString())
                .contains("cannot connect to MCP server '" + slug + "' at " + nowhere, "connection failed");
        JsonNode connection = ok(send("GET", "/api/connections/org/" + slug + "/default", null));
        assertThat(connection.path("lastHealth").path("status").asString()).isEqualTo("degraded");

        HttpResponse<String> probe = send("POST", "/api/mcp/probe", Map.of("endpoint", nowhere));
        JsonNode error = JSON.readTree(probe.body());
        assertThat(probe.statusCode()).as(probe.body()).isEqualTo(400);
        assertThat(error.path("_tag").asString()).isEqualTo("McpConnectionError");
        assertThat(error.path("transport").asString()).isEqualTo("remote");
        assertThat(error.path("message").asString()).as(probe.body()).contains(nowhere, "connection failed");
    }

    @Test
    void probeOfAnEndpointThatWantsCredentialsSaysSo() throws Exception {
        HttpServer locked = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        locked.createContext("/", exchange -> {
            exchange.getResponseHeaders().add("WWW-Authenticate", "Bearer");
            exchange.sendResponseHeaders(401, -1);
            exchange.close();
        });
        locked.start();
        try {
            JsonNode probe = ok(send("POST", "/api/mcp/probe", Map.of("endpoint",
                    "http://127.0.0.1:" + locked.getAddress().getPort() + "/mcp")));

            assertThat(probe.path("connected").asBoolean()).as(probe.toString()).isFalse();
            assertThat(probe.path("requiresAuthentication").asBoolean()).as(probe.toString()).isTrue();
        }
        finally {
            locked.stop(0);
        }
    }

    // ---- steps ---------------------------------------------------------------------------

    /**
     * A connection with a credential header, then a health check, a refresh, the tool list and a call of
     * {@code echo} on it; returns echo's address.
     */
    private String connectAndExercise(String slug) throws Exception {
        ok(send("POST", "/api/connections", Map.of("owner", "user", "name", "alice", "integration", slug, "template", "api-key",
                "values", Map.of(CREDENTIAL_HEADER, CREDENTIAL_VALUE))));
        String connection = "/api/connections/user/" + slug + "/alice";

        JsonNode verdict = ok(send("POST", connection + "/health", null));
        assertThat(verdict.path("status").asString()).as(verdict.toString()).isEqualTo("healthy");
        assertThat(verdict.path("checkedAt").asLong()).isPositive();

        JsonNode refreshed = ok(send("POST", connection + "/refresh", null));
        List<String> names = names(refreshed);
        assertThat(names).as("the full catalog of server-everything").contains("echo", "get_sum", "get_tiny_image")
                .hasSizeGreaterThanOrEqualTo(10).doesNotHaveDuplicates();

        JsonNode listed = ok(send("GET", "/api/tools?integration=" + slug + "&owner=user&connection=alice", null));
        assertThat(names(listed)).containsExactlyInAnyOrderElementsOf(names);
        JsonNode echo = find(listed, "echo");
        String address = echo.path("address").asString();
        assertThat(address).isEqualTo("tools." + slug + ".user.alice.echo");
        assertThat(echo.path("pluginId").asString()).isEqualTo("mcp");
        assertThat(echo.path("description").asString()).isNotBlank();

        JsonNode called = ok(send("POST", "/api/tools/call", Map.of("address", address, "args", Map.of("message", "hello over the wire"))));
        assertThat(called.path("isError").asBoolean(false)).as(called.toString()).isFalse();
        assertThat(called.path("content").get(0).path("text").asString()).as(called.toString()).contains("hello over the wire");
        return address;
    }

    private static void assertEveryRequestCarriesConfigAndCredential(List<Seen> seen) {
        assertThat(seen).as("requests at the server").allSatisfy(request -> {
            assertThat(request.query()).as(request.toString()).containsAllEntriesOf(QUERY);
            assertThat(request.header("X-Tether-Test")).as(request.toString()).contains("from-integration");
            assertThat(request.header(CREDENTIAL_HEADER)).as(request.toString()).contains(CREDENTIAL_VALUE);
        });
    }

    private String register(String name, String endpoint, String remoteTransport) throws Exception {
        JsonNode created = ok(send("POST", "/api/mcp/servers", Map.of("name", name, "endpoint", endpoint,
                "remoteTransport", remoteTransport, "headers", INTEGRATION_HEADERS, "queryParams", QUERY)));
        String slug = created.path("slug").asString();
        registered.add(slug);
        ok(send("POST", "/api/connections", TetherClient.defaultConnection(slug)));
        JsonNode server = ok(send("GET", "/api/mcp/servers/" + slug, null));
        assertThat(server.path("config").path("remoteTransport").asString()).isEqualTo(remoteTransport);
        assertThat(server.path("config").path("headers").path("X-Tether-Test").asString()).as("header values are masked")
                .isEqualTo(ServerConfigs.MASK);
        assertThat(server.path("config").path("queryParams").path("tenant").asString()).as("query values are masked")
                .isEqualTo(ServerConfigs.MASK);
        assertThat(server.toString()).doesNotContain("acme").doesNotContain("from-integration");
        return slug;
    }

    private RecordingProxy proxy(Everything server) throws IOException {
        RecordingProxy proxy = new RecordingProxy(server.port());
        proxies.add(proxy);
        return proxy;
    }

    private static List<String> names(JsonNode tools) {
        List<String> names = new ArrayList<>();
        tools.forEach(tool -> names.add(tool.path("name").asString()));
        return names;
    }

    private static JsonNode find(JsonNode tools, String name) {
        for (JsonNode tool : tools) {
            if (tool.path("name").asString().equals(name)) {
                return tool;
            }
        }
        throw new AssertionError("no tool " + name + " in " + tools);
    }

    private static JsonNode ok(HttpResponse<String> response) {
        assertThat(response.statusCode()).as(response.request().method() + " " + response.request().uri() + ": " + response.body())
                .isEqualTo(200);
        return JSON.readTree(response.body());
    }

    private HttpResponse<String> send(String method, String path, Object body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Authorization", "Bearer " + TOKEN)
                .timeout(BOUND)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    // ---- server-everything ---------------------------------------------------------------

    /** server-everything as a child of the test on a free loopback port, its output in a log file. */
    private record Everything(Process process, int port, Path log) implements AutoCloseable {

        static Everything start(EverythingTransport transport) throws Exception {
            int port = Fixture.freeLoopbackPort();
            Path log = DATA_DIR.resolve("everything-" + transport.argument + ".log");
            Process process = Fixture.everything(transport, port).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            Everything server = new Everything(process, port, log);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!server.ready()) {
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    server.close();
                    throw new IllegalStateException("server-everything (" + transport.argument + ") did not start: "
                            + Files.readString(log));
                }
                Thread.sleep(50);
            }
            return server;
        }

        private boolean ready() throws IOException {
            String output = Files.readString(log);
            return output.contains("listening on port") || output.contains("Server is running on port");
        }

        @Override
        public void close() {
            process.destroy();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
            catch (InterruptedException ex) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    private static Path temporaryDirectory(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> tree = Files.walk(dir)) {
            tree.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }
}
