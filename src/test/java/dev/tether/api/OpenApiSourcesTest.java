package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.DiscoveryDocumentServer;

/**
 * Tether's own API as an OpenAPI source of Tether: its {@code /api/docs} added with an {@code apikey} bearer
 * template, its operations listed as {@code group.leaf} tools, called from code with the connection's token, and a
 * {@code DELETE} paused for approval. Bad specs are refused with Executor's tagged errors and store nothing.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "tether.http.max-document-size=2MB")
@DirtiesContext
@InProcess
class OpenApiSourcesTest {

    private static final Path DATA_DIR = DataDirs.create("openapi");

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @LocalServerPort
    int port;

    private TetherClient tether;
    private String token;

    @AfterAll
    static void removeDataDir() {
        DataDirs.delete(DATA_DIR);
    }

    @BeforeEach
    void connect() {
        token = DataDirs.token(DATA_DIR);
        tether = new TetherClient(port, token);
    }

    @AfterEach
    void cleanUp() {
        for (JsonNode integration : tether.get("/api/integrations").json()) {
            tether.delete("/api/integrations/" + integration.path("slug").asString());
        }
    }

    @Test
    void tethersOwnApiIsASourceOfTether() {
        JsonNode added = ok(tether.post("/api/openapi/specs", Map.of(
                "spec", Map.of("kind", "url", "url", tether.baseUrl() + "/api/docs"),
                "slug", "tether",
                "authenticationTemplate", List.of(Map.of("slug", "bearer", "type", "apiKey",
                        "headers", Map.of("Authorization", List.of("Bearer ", Map.of("type", "variable", "name", "token"))))))));
        assertThat(added.path("slug").asString()).isEqualTo("tether");
        assertThat(added.path("toolCount").asInt()).isGreaterThan(20);

        JsonNode config = ok(tether.get("/api/openapi/integrations/tether/config"));
        assertThat(config.path("authenticationTemplate").toString()).isEqualTo("[{\"slug\":\"bearer\",\"kind\":\"apikey\","
                + "\"placements\":[{\"carrier\":\"header\",\"name\":\"Authorization\",\"prefix\":\"Bearer \"}]}]");
        ok(tether.post("/api/connections", Map.of("owner", "org", "name", "default", "integration", "tether",
                "template", "bearer", "value", token)));

        JsonNode tools = ok(tether.get("/api/tools?integration=tether&includeAnnotations=true"));
        JsonNode listIntegrations = tool(tools, "GET /api/integrations");
        JsonNode deleteIntegration = tool(tools, "DELETE /api/integrations/{slug}");
        assertThat(listIntegrations.path("pluginId").asString()).isEqualTo("openapi");
        assertThat(listIntegrations.path("name").asString()).contains(".");
        assertThat(listIntegrations.path("address").asString()).isEqualTo("tools.tether.org.default." + listIntegrations.path("name").asString());
        assertThat(listIntegrations.path("requiresApproval").asBoolean()).isFalse();
        assertThat(deleteIntegration.path("requiresApproval").asBoolean()).isTrue();
        assertThat(deleteIntegration.path("approvalDescription").asString()).isEqualTo("DELETE /api/integrations/{slug}");

        JsonNode listed = execute("return await " + listIntegrations.path("address").asString() + "()");
        assertThat(listed.path("status").asString()).as(listed.toString()).isEqualTo("completed");
        JsonNode result = listed.path("structured").path("result");
        assertThat(result.path("ok").asBoolean()).as(result.toString()).isTrue();
        assertThat(result.path("http").path("status").asInt()).isEqualTo(200);
        assertThat(result.path("data").valueStream().map(i -> i.path("slug").asString() + ":" + i.path("kind").asString()))
                .containsExactly("executor:built-in", "tether:openapi");

        JsonNode paused = execute("return await " + deleteIntegration.path("address").asString() + "({slug: 'tether'})");
        assertThat(paused.path("status").asString()).as(paused.toString()).isEqualTo("paused");
        assertThat(paused.path("structured").path("interaction").path("message").asString())
                .as("as Executor asks: the operation's approval description").startsWith("DELETE /api/integrations/{slug}\n\nArguments:\n");
        assertThat(added()).as("nothing deleted while paused").isEqualTo(1);
        Reply declined = tether.post("/api/executions/" + paused.path("structured").path("executionId").asString() + "/resume",
                Map.of("action", "decline"));
        assertThat(declined.status()).isEqualTo(200);
        assertThat(added()).isEqualTo(1);
    }

    @Test
    void aWrongTokenIsConnectionRejected() {
        ok(tether.post("/api/openapi/specs", Map.of("spec", Map.of("kind", "url", "url", tether.baseUrl() + "/api/docs"),
                "slug", "tether", "authenticationTemplate", List.of(Map.of("slug", "bearer", "type", "apiKey",
                        "headers", Map.of("Authorization", List.of("Bearer ", Map.of("type", "variable", "name", "token"))))))));
        ok(tether.post("/api/connections", Map.of("owner", "org", "name", "default", "integration", "tether",
                "template", "bearer", "value", "not-the-token")));
        String address = tool(ok(tether.get("/api/tools?integration=tether")), "GET /api/integrations").path("address").asString();
        JsonNode result = execute("return await " + address + "()").path("structured").path("result");
        assertThat(result.path("ok").asBoolean()).isFalse();
        assertThat(result.path("error").path("code").asString()).isEqualTo("connection_rejected");
        assertThat(result.path("error").path("status").asInt()).isEqualTo(401);
    }

    @Test
    void badSpecsAreTaggedErrorsAndStoreNothing() {
        refused(blob("not: [valid"), "OpenApiParseError", "neither JSON nor YAML");
        refused(blob("{\"openapi\":\"3.0.0\",\"info\":{\"title\":\"x\",\"version\":\"1\"},\"paths\":{\"/a\":{\"get\":{\"responses\":"
                + "{\"200\":{\"description\":\"ok\",\"content\":{\"application/json\":{\"schema\":{\"$ref\":\"file:///etc/passwd\"}}}}}}}}}"),
                "OpenApiParseError", "file:///etc/passwd");
        refused(blob("{\"openapi\":\"3.0.0\",\"info\":{\"title\":\"x\",\"version\":\"1\"},\"paths\":{\"/a\":{\"get\":{\"responses\":"
                + "{\"200\":{\"$ref\":\"http://169.254.169.254/latest/meta-data\"}}}}}}"), "OpenApiParseError", "refers outside itself");
        refused(blob("{\"openapi\":\"3.0.0\",\"info\":{\"title\":\"x\",\"version\":\"1\"},\"paths\":{}}"),
                "OpenApiExtractionError", "no paths");
        refused(blob("{\"openapi\":\"3.0.0\",\"info\":{\"title\":\"x\",\"version\":\"1\"},\"paths\":{\"/a/{id}\":{\"get\":{"
                + "\"parameters\":[{\"name\":\"id\",\"in\":\"path\",\"required\":true,\"schema\":{\"type\":\"string\"}},"
                + "{\"name\":\"id\",\"in\":\"query\",\"schema\":{\"type\":\"string\"}}],\"responses\":{\"200\":{\"description\":\"ok\"}}}}}}"),
                "OpenApiExtractionError", "two inputs named `id`");
        String huge = "{\"openapi\":\"3.0.0\",\"info\":{\"title\":\"" + "x".repeat(5 * 1024 * 1024) + "\",\"version\":\"1\"},\"paths\":{}}";
        refused(blob(huge), "OpenApiParseError", "larger than");
        refused(Map.of("spec", Map.of("kind", "url", "url", tether.baseUrl() + "/api/no-such-spec"), "slug", "bad"),
                "OpenApiParseError", "answered HTTP");
        assertThat(added()).isZero();
        assertThat(ok(tether.get("/api/openapi/integrations/bad")).isNull()).isTrue();
    }

    @Test
    void swaggerTwoIsReadAsOpenApiThree() {
        String swagger = """
                {"swagger": "2.0", "info": {"title": "Pets", "version": "1"}, "host": "127.0.0.1:9", "basePath": "/v1",
                 "schemes": ["http"],
                 "paths": {"/pets/{petId}": {"get": {"tags": ["pets"], "operationId": "getPet",
                   "parameters": [{"name": "petId", "in": "path", "required": true, "type": "string"}],
                   "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Pet"}}}},
                   "delete": {"tags": ["pets"], "operationId": "deletePet",
                   "parameters": [{"name": "petId", "in": "path", "required": true, "type": "string"}],
                   "responses": {"204": {"description": "gone"}}}}},
                 "definitions": {"Pet": {"type": "object", "properties": {"name": {"type": "string"}}}}}
                """;
        JsonNode preview = ok(tether.post("/api/openapi/preview", Map.of("spec", swagger)));
        assertThat(preview.path("title").asString()).isEqualTo("Pets");
        assertThat(preview.path("operationCount").asInt()).isEqualTo(2);
        assertThat(preview.path("servers").get(0).path("url").asString()).isEqualTo("http://127.0.0.1:9/v1");
        ok(tether.post("/api/openapi/specs", blob(swagger)));
        ok(tether.post("/api/connections", Map.of("owner", "org", "name", "default", "integration", "spec",
                "template", "none", "values", Map.of())));
        JsonNode tools = ok(tether.get("/api/tools?integration=spec&includeAnnotations=true"));
        assertThat(tools.valueStream().map(t -> t.path("name").asString())).containsExactly("pets.deletePet", "pets.getPet");
        JsonNode schema = ok(tether.get("/api/tools/schema?address=tools.spec.org.default.pets.getPet"));
        // The schema route presents output schemas in Executor's MCP CallToolResult shape; the spec's own schema is inside.
        assertThat(schema.path("outputSchema").toString()).contains("#/$defs/Pet");
        assertThat(schema.path("inputSchema").path("required").toString()).isEqualTo("[\"petId\"]");
    }

    @Test
    void aGoogleDiscoveryDocumentByUrlOrPastedBecomesExecutorsTools() {
        try (DiscoveryDocumentServer google = new DiscoveryDocumentServer()) {
            JsonNode preview = ok(tether.post("/api/openapi/preview", Map.of("spec", google.url())));
            assertThat(preview.path("title").asString()).isEqualTo("Google OAuth2 API");
            assertThat(preview.path("version").asString()).isEqualTo("v2");
            assertThat(preview.path("servers").toString()).isEqualTo("[{\"url\":\"https://www.googleapis.com/\"}]");
            assertThat(preview.path("operations").valueStream().map(o -> o.path("method").asString() + " " + o.path("path").asString()))
                    .containsExactlyInAnyOrder("get /oauth2/v2/certs", "post /oauth2/v2/tokeninfo", "get /oauth2/v2/userinfo",
                            "get /userinfo/v2/me");
            assertThat(preview.path("oauth2Presets").get(0).path("securitySchemeName").asString()).isEqualTo("googleOAuth2");

            JsonNode added = ok(tether.post("/api/openapi/specs", Map.of("spec", Map.of("kind", "googleDiscovery", "url", google.url()),
                    "slug", "google")));
            assertThat(added.toString()).isEqualTo("{\"slug\":\"google\",\"toolCount\":4}");
            // What Executor 1.5.9 stores for this document: Google's OAuth, the scopes as its consent screen names them.
            assertThat(ok(tether.get("/api/openapi/integrations/google/config")).path("authenticationTemplate").toString())
                    .isEqualTo("[{\"slug\":\"googleOAuth2\",\"kind\":\"oauth2\",\"authorizationUrl\":\"https://accounts.google.com/o/oauth2/v2/auth\","
                            + "\"tokenUrl\":\"https://oauth2.googleapis.com/token\",\"scopes\":[\"https://www.googleapis.com/auth/plus.login\","
                            + "\"https://www.googleapis.com/auth/plus.me\",\"email\",\"profile\"]}]");
            List<String> names = toolNames("google");
            assertThat(names).containsExactly("getCertForOpenIdConnect", "tokeninfo", "userinfo.get", "userinfo.v2.me.get");
            JsonNode tokeninfo = tool(ok(tether.get("/api/tools?integration=google&includeAnnotations=true")), "POST /oauth2/v2/tokeninfo");
            assertThat(tokeninfo.path("requiresApproval").asBoolean()).isTrue();
            assertThat(tokeninfo.path("approvalDescription").asString()).isEqualTo("POST /oauth2/v2/tokeninfo");
            JsonNode schema = ok(tether.get("/api/tools/schema?address=tools.google.org.default.tokeninfo"));
            assertThat(schema.path("inputSchema").path("properties").path("alt").toString())
                    .as("the document's global parameters join the method's").contains("\"enum\":[\"json\"]");
            assertThat(schema.path("inputSchema").path("properties").has("token_handle")).isTrue();

            ok(tether.post("/api/openapi/specs", Map.of("spec", Map.of("kind", "blob", "value", google.text()), "slug", "pasted")));
            assertThat(toolNames("pasted")).as("pasted, it is recognised by its kind").isEqualTo(names);

            refused(blob(google.text().replace("\"rootUrl\"", "\"rootURL\"")), "OpenApiParseError", "missing one of: name, version, rootUrl");
            refused(Map.of("spec", Map.of("kind", "googleDiscovery", "url", tether.baseUrl() + "/api/no-such-document"), "slug", "bad"),
                    "OpenApiParseError", "answered HTTP");
            assertThat(added()).isEqualTo(2);
        }
    }

    private List<String> toolNames(String integration) {
        ok(tether.post("/api/connections", Map.of("owner", "org", "name", "default", "integration", integration,
                "template", "none", "values", Map.of())));
        return ok(tether.get("/api/tools?integration=" + integration)).valueStream().map(t -> t.path("name").asString()).sorted().toList();
    }

    /** Integrations added, the built-in {@code executor} aside. */
    private long added() {
        return ok(tether.get("/api/integrations")).valueStream().filter(i -> !i.path("slug").asString().equals("executor")).count();
    }

    private static Map<String, Object> blob(String spec) {
        return Map.of("spec", Map.of("kind", "blob", "value", spec), "slug", "spec");
    }

    private void refused(Map<String, Object> body, String tag, String says) {
        Reply reply = tether.post("/api/openapi/specs", body);
        assertThat(reply.status()).as(reply.toString().substring(0, Math.min(500, reply.toString().length()))).isEqualTo(400);
        assertThat(reply.json().path("_tag").asString()).isEqualTo(tag);
        assertThat(reply.json().path("message").asString()).contains(says);
    }

    private static JsonNode tool(JsonNode tools, String description) {
        return StreamSupport.stream(tools.spliterator(), false).filter(t -> t.path("description").asString().equals(description))
                .findFirst().orElseThrow(() -> new AssertionError("no tool described as " + description + " in " + tools));
    }

    private JsonNode execute(String code) {
        return ok(tether.post("/api/executions", Map.of("code", code)));
    }

    private static JsonNode ok(Reply reply) {
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply.json();
    }
}
