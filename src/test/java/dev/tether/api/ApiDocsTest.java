package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

import dev.tether.api.ApiClient.Reply;

/**
 * {@code GET /api/docs}: Tether's own OpenAPI document, generated from the controllers, where Executor serves its
 * docs. It lists every Executor route Tether serves and Tether's additions.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=docs-test-token", "tether.docker.reap-interval=1h" })
@DirtiesContext
class ApiDocsTest {

    /** Executor's routes that Tether serves, as {@code path -> methods}; with {@code /api}. */
    private static final Map<String, List<String>> EXECUTOR_ROUTES = Map.ofEntries(
            Map.entry("/api/integrations", List.of("get")),
            Map.entry("/api/integrations/{slug}", List.of("get", "patch", "delete")),
            Map.entry("/api/mcp/servers", List.of("post")),
            Map.entry("/api/mcp/servers/{slug}", List.of("get", "delete")),
            Map.entry("/api/mcp/servers/{slug}/config", List.of("post")),
            Map.entry("/api/mcp/probe", List.of("post")),
            Map.entry("/api/connections", List.of("get", "post")),
            Map.entry("/api/connections/validate", List.of("post")),
            Map.entry("/api/connections/{owner}/{integration}/{name}", List.of("get", "patch", "delete")),
            Map.entry("/api/connections/{owner}/{integration}/{name}/refresh", List.of("post")),
            Map.entry("/api/connections/{owner}/{integration}/{name}/health", List.of("post")),
            Map.entry("/api/tools", List.of("get")),
            Map.entry("/api/tools/schema", List.of("get")),
            Map.entry("/api/health", List.of("get")));

    /** Tether's additions. */
    private static final Map<String, List<String>> TETHER_ROUTES = Map.of(
            "/api/connections/health", List.of("post"),
            "/api/connections/health/events", List.of("get"),
            "/api/tools/call", List.of("post"));

    @TempDir
    static Path dataDir;

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", () -> dataDir.toString());
    }

    @Test
    void servesAnOpenApi3DocumentOfEveryRoute() {
        Reply reply = new ApiClient(port, null).get("/api/docs");
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        assertThat(reply.header("content-type")).hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        JsonNode docs = reply.json();

        assertThat(docs.path("openapi").asString()).startsWith("3.");
        assertThat(docs.path("info").path("title").asString()).isEqualTo("Tether");
        assertThat(docs.path("components").path("securitySchemes").path("bearer").path("scheme").asString()).isEqualTo("bearer");
        JsonNode paths = docs.path("paths");
        EXECUTOR_ROUTES.forEach((path, methods) -> assertThat(paths.path(path).propertyNames()).as(path).containsAll(methods));
        TETHER_ROUTES.forEach((path, methods) -> assertThat(paths.path(path).propertyNames()).as(path).containsAll(methods));
        assertThat(paths.propertyNames()).as("only /api routes").allSatisfy(path -> assertThat(path).startsWith("/api/"));
    }

    /** What only the code knows: parameters, bodies and response shapes come from the controllers' signatures. */
    @Test
    void isGeneratedFromTheControllers() {
        JsonNode docs = new ApiClient(port, null).get("/api/docs").json();
        JsonNode tools = docs.path("paths").path("/api/tools").path("get");
        assertThat(tools.path("parameters").valueStream().map(p -> p.path("name").asString()))
                .containsExactlyInAnyOrder("integration", "owner", "connection", "query", "includeAnnotations", "includeBlocked");
        JsonNode health = docs.path("paths").path("/api/connections/{owner}/{integration}/{name}/health").path("post");
        assertThat(health.path("parameters").valueStream().map(p -> p.path("name").asString()))
                .containsExactlyInAnyOrder("owner", "integration", "name", "ifStaleMs");
        JsonNode call = docs.path("paths").path("/api/tools/call").path("post");
        assertThat(call.path("requestBody").path("content").path("application/json").path("schema").path("$ref").asString())
                .endsWith("/CallRequest");
        assertThat(docs.path("components").path("schemas").path("ConnectionView").path("properties").propertyNames())
                .contains("owner", "name", "integration", "template", "provider", "address", "identityLabel", "lastHealth");
        JsonNode server = docs.path("paths").path("/api/mcp/servers/{slug}").path("get").path("responses").path("200");
        assertThat(server.findValues("$ref")).singleElement().satisfies(ref -> assertThat(ref.asString()).endsWith("/ServerView"));
        JsonNode events = docs.path("paths").path("/api/connections/health/events").path("get").path("responses").path("200");
        assertThat(events.path("content").propertyNames()).contains("text/event-stream");
    }
}
