package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

import dev.tether.api.ApiClient.Reply;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.RealExecutor;

/**
 * The same code, against the same server (server-everything over stdio), sent to the real Executor 1.5.9 daemon and to
 * Tether: the answers must be byte for byte the same, except where the data cannot be (an error's stack trace, which
 * names Executor's own bundle: there the first line must agree). Skipped with a warning when the Executor CLI is not
 * installed under {@code src/test/clients}; in CI ({@code CI=true}) its absence fails.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + ExecutorParityTest.TOKEN, "tether.docker.reap-interval=1h" })
@DirtiesContext
@InProcess
class ExecutorParityTest {

    static final String TOKEN = "parity-test-token";

    @TempDir
    static Path dataDir;

    private static RealExecutor executor;
    private static int executorPort;

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", () -> dataDir.resolve("tether").toString());
    }

    @BeforeAll
    static void startExecutor() throws IOException, InterruptedException {
        executor = RealExecutor.start(dataDir, TOKEN, "ExecutorParityTest");
        executorPort = executor.port();
    }

    @AfterAll
    static void stopExecutor() throws InterruptedException {
        if (executor != null) {
            executor.close();
        }
    }

    @Test
    void sameCodeSameAnswers() {
        ApiClient real = new ApiClient(executorPort, TOKEN);
        ApiClient tether = new ApiClient(port, TOKEN);
        register(real);
        register(tether);

        Map<String, String> exact = new LinkedHashMap<>();
        exact.put("echo", "return await tools.everything.org.default.echo({message: 'hi'})");
        exact.put("sum", "return await tools.everything.org.default.get_sum({a: 1, b: 2})");
        exact.put("structured content", "return await tools.everything.org.default.get_structured_content({location: 'New York'})");
        exact.put("tool error", "return await tools.everything.org.default.echo({})");
        exact.put("unknown tool", "return await tools.everything.org.default.nope({})");
        exact.put("logs", "console.log('a', 1, {b: 2}); console.info('i'); console.warn('w'); console.error('e'); return 1");
        exact.put("only logs", "console.log(undefined, null, [1], 's')");
        exact.put("object", "return {a: 1, b: [1, 2], c: 'x', d: undefined}");
        exact.put("nothing", "const x = 1;");
        exact.put("null", "return null");
        exact.put("string", "return 'hello'");
        exact.put("number", "return 3.5");
        exact.put("boolean", "return false");
        exact.put("array", "return [1, 'a', null]");
        exact.put("date", "return new Date(0)");
        exact.put("unicode", "return 'żółw \\u2028 \\u0007 \"q\"'");
        exact.put("tools enumeration", "return Object.keys(tools)");
        List<String> differences = new ArrayList<>();
        exact.forEach((name, code) -> {
            String expected = execute(real, code).body();
            String actual = execute(tether, code).body();
            if (!expected.equals(actual)) {
                differences.add(name + "\n  executor: " + expected + "\n  tether:   " + actual);
            }
        });

        Map<String, String> errors = new LinkedHashMap<>();
        errors.put("thrown error", "console.log('before'); throw new Error('boom')");
        errors.put("type error", "throw new TypeError('bad type')");
        errors.put("thrown string", "throw 'plain'");
        errors.put("rejected", "await Promise.reject(new Error('rej'))");
        errors.forEach((name, code) -> {
            JsonNode expected = execute(real, code).json();
            JsonNode actual = execute(tether, code).json();
            if (!firstLines(expected).equals(firstLines(actual))) {
                differences.add(name + " (first lines)\n  executor: " + firstLines(expected) + "\n  tether:   " + firstLines(actual));
            }
        });
        assertThat(differences).as("answers that differ from Executor 1.5.9's").isEmpty();
    }

    @Test
    void samePausesAndResumes() {
        ApiClient real = new ApiClient(executorPort, TOKEN);
        ApiClient tether = new ApiClient(port, TOKEN);
        register(real);
        register(tether);
        for (ApiClient daemon : List.of(real, tether)) {
            Reply policy = daemon.post("/api/policies", Map.of("owner", "org", "pattern", "everything.org.default.echo",
                    "action", "require_approval"));
            assertThat(policy.status()).as(policy.toString()).isEqualTo(200);
            assertThat(policy.json().path("position").asString()).isEqualTo("a0");
        }
        String code = "console.log('pre'); try { const r = await tools.everything.org.default.echo({message: 'hi'});"
                + " console.log('post'); return r } catch (e) { return 'caught: ' + e.message }";
        for (String action : List.of("accept", "decline", "cancel")) {
            String expectedPause = execute(real, code).body();
            String actualPause = execute(tether, code).body();
            assertThat(actualPause).as("the pause before " + action).isEqualTo(expectedPause);
            String id = ApiClient.JSON.readTree(expectedPause).path("structured").path("executionId").asString();
            assertThat(tether.get("/api/executions/" + id).body()).isEqualTo(real.get("/api/executions/" + id).body());
            String expected = real.post("/api/executions/" + id + "/resume", Map.of("action", action)).body();
            String actual = tether.post("/api/executions/" + id + "/resume", Map.of("action", action)).body();
            assertThat(actual).as("resume with " + action).isEqualTo(expected);
            assertThat(tether.get("/api/executions/" + id).body()).isEqualTo(real.get("/api/executions/" + id).body());
        }
    }

    /**
     * What the desktop UI reads, from both daemons over the same server: the built-in integration and its 33 tools,
     * every tool item with Executor's annotations, every schema with its TypeScript, byte for byte; the 1Password,
     * detect, auth-method and provider answers byte for byte. Executor lists two elicitation tools of
     * server-everything that it offers only to a client that declares MCP elicitation, which Tether does not yet.
     */
    @Test
    void sameAnswersForTheDesktopUi() {
        ApiClient real = new ApiClient(executorPort, TOKEN);
        ApiClient tether = new ApiClient(port, TOKEN);
        register(real);
        register(tether);
        List<String> differences = new ArrayList<>();
        for (String route : List.of("/api/integrations/executor", "/api/integrations/everything", "/api/tools?integration=executor",
                "/api/onepassword/config", "/api/onepassword/status", "/api/mcp/servers/nope")) {
            same(differences, route, real.get(route), tether.get(route));
        }
        JsonNode integrations = tether.get("/api/integrations").json();
        assertThat(integrations.get(0)).isEqualTo(real.get("/api/integrations").json().get(0));

        List<JsonNode> theirs = real.get("/api/tools?integration=everything").json().valueStream().toList();
        List<JsonNode> ours = tether.get("/api/tools?integration=everything").json().valueStream().toList();
        // The same tools item for item, server-everything's two elicitation tools included: Tether's client declares
        // elicitation as Executor's does.
        assertThat(ours).containsExactlyInAnyOrderElementsOf(theirs);
        for (JsonNode tool : ours) {
            // Equal as JSON: Tether's catalog keeps a server's input schema with "$schema" first, Executor as sent.
            String route = "/api/tools/schema?address=" + tool.path("address").asString();
            Reply expected = real.get(route);
            Reply actual = tether.get(route);
            if (expected.status() != actual.status() || !expected.json().equals(actual.json())) {
                same(differences, route, expected, actual);
            }
        }
        for (JsonNode tool : tether.get("/api/tools?integration=executor").json()) {
            String route = "/api/tools/schema?address=" + tool.path("address").asString();
            same(differences, route, real.get(route), tether.get(route));
        }

        String unreachable = "http://127.0.0.1:" + Fixture.freeLoopbackPort() + "/mcp";
        for (Map<String, Object> body : List.<Map<String, Object>>of(Map.of("url", unreachable), Map.of("url", "  "),
                Map.of("url", "not a url"), Map.of("url", "http://127.0.0.1:" + executorPort + "/api/health"))) {
            same(differences, "detect " + body, real.post("/api/integrations/detect", body), tether.post("/api/integrations/detect", body));
        }

        for (ApiClient daemon : List.of(real, tether)) {
            Reply added = daemon.post("/api/mcp/servers", Map.of("transport", "remote", "name", "Keyed Remote", "endpoint", unreachable,
                    "auth", Map.of("kind", "header", "headerName", "X-Api-Key", "prefix", "Key ")));
            assertThat(added.status()).as(added.toString()).isEqualTo(200);
        }
        same(differences, "integration keyed_remote", real.get("/api/integrations/keyed_remote"), tether.get("/api/integrations/keyed_remote"));
        // A config answers as it was given: optional fields the client left out are left out, given ones kept, empty or not.
        for (ApiClient daemon : List.of(real, tether)) {
            Reply added = daemon.post("/api/mcp/servers", Map.of("transport", "stdio", "name", "Given Fields", "slug", "given_fields",
                    "command", "node", "args", List.of(), "env", Map.of(), "cwd", "/tmp"));
            assertThat(added.status()).as(added.toString()).isEqualTo(200);
        }
        for (String slug : List.of("everything", "keyed_remote", "given_fields")) {
            same(differences, "server " + slug, real.get("/api/mcp/servers/" + slug), tether.get("/api/mcp/servers/" + slug));
        }
        Map<String, Object> bare = Map.of("config", Map.of("transport", "stdio", "command", "node"));
        same(differences, "configure with fields left out", real.post("/api/mcp/servers/given_fields/config", bare),
                tether.post("/api/mcp/servers/given_fields/config", bare));
        same(differences, "server given_fields reconfigured", real.get("/api/mcp/servers/given_fields"),
                tether.get("/api/mcp/servers/given_fields"));
        Map<String, Object> merged = Map.of("authenticationTemplate", List.of(Map.of("kind", "none"),
                Map.of("slug", "header", "type", "apiKey", "label", "Team key",
                        "headers", Map.of("Authorization", List.of("Bearer ", Map.of("type", "variable", "name", "token")))),
                Map.of("kind", "oauth2", "slug", "oauth2")));
        Reply realMerge = real.post("/api/mcp/servers/keyed_remote/auth", merged);
        Reply tetherMerge = tether.post("/api/mcp/servers/keyed_remote/auth", merged);
        // A slug-less method merged in gets a random custom_ slug: compare with it blanked out.
        same(differences, "auth merge", customSlugsBlanked(realMerge), customSlugsBlanked(tetherMerge));
        Map<String, Object> replaced = Map.of("mode", "replace", "authenticationTemplate", List.of(Map.of("kind", "none"),
                Map.of("type", "apiKey", "queryParams", Map.of("token", List.of(Map.of("type", "variable", "name", "token")))),
                Map.of("type", "apiKey", "headers", Map.of("X-A", "literal", "X-B", List.of("p-", Map.of("type", "variable", "name", "b"))))));
        same(differences, "auth replace", real.post("/api/mcp/servers/keyed_remote/auth", replaced),
                tether.post("/api/mcp/servers/keyed_remote/auth", replaced));
        same(differences, "integration after replace", real.get("/api/integrations/keyed_remote"), tether.get("/api/integrations/keyed_remote"));
        same(differences, "auth of a stdio server", real.post("/api/mcp/servers/everything/auth", merged),
                tether.post("/api/mcp/servers/everything/auth", merged));
        same(differences, "auth of an unknown server", real.post("/api/mcp/servers/nope/auth", merged),
                tether.post("/api/mcp/servers/nope/auth", merged));

        // A connection's name is made an identifier as Executor makes it: words, lower-cased, camel-cased.
        for (String name : List.of("My Work-Account", "localLocalhost", "2fa key", "--")) {
            Map<String, Object> body = Map.of("owner", "org", "name", name, "integration", "everything", "template", "none",
                    "values", Map.of());
            same(differences, "connection named " + name, real.post("/api/connections", body),
                    tether.post("/api/connections", body));
        }
        same(differences, "connections of everything", real.get("/api/connections?integration=everything"),
                tether.get("/api/connections?integration=everything"));

        // Operations in Executor's order: paths as JavaScript's localeCompare sorts them (punctuation before digits
        // before letters, letters without regard to case first), then each path's methods in HTTP's order.
        Map<String, Object> spec = Map.of("spec", PREVIEWED_SPEC);
        same(differences, "openapi preview", real.post("/api/openapi/preview", spec), tether.post("/api/openapi/preview", spec));

        for (String route : List.of("/api/providers", "/api/providers/file/items", "/api/providers/onepassword/items",
                "/api/providers/nope/items")) {
            same(differences, route, real.get(route), tether.get(route));
        }
        for (ApiClient daemon : List.of(real, tether)) {
            assertThat(daemon.put("/api/onepassword/config", Map.of("auth", Map.of("kind", "desktop-app"))).status()).isEqualTo(400);
            assertThat(daemon.post("/api/integrations/detect", Map.of()).status()).isEqualTo(400);
        }
        assertThat(differences).as("answers that differ from Executor 1.5.9's").isEmpty();
    }

    /** A document whose paths sort differently by code point and by collation: braces, case, dashes, digits. */
    private static final String PREVIEWED_SPEC = """
            {"openapi": "3.0.3", "info": {"title": "Order", "version": "1"}, "paths": {
              "/pets/findByStatus": {"get": {"operationId": "findByStatus", "responses": {"200": {"description": "ok"}}}},
              "/pets/{petId}": {"get": {"responses": {"200": {"description": "ok"}}},
                                "delete": {"responses": {"204": {"description": "gone"}}},
                                "post": {"responses": {"200": {"description": "ok"}}}},
              "/Pets/Zoo": {"get": {"responses": {"200": {"description": "ok"}}}},
              "/pets/apple": {"get": {"responses": {"200": {"description": "ok"}}}},
              "/pets-archive": {"get": {"responses": {"200": {"description": "ok"}}}},
              "/pets_archive": {"get": {"responses": {"200": {"description": "ok"}}}},
              "/pets/2fa": {"put": {"responses": {"200": {"description": "ok"}}}},
              "/pets/{petId}/photos": {"get": {"summary": "Photos", "tags": ["photos"], "responses": {"200": {"description": "ok"}}}},
              "/pets": {"get": {"responses": {"200": {"description": "ok"}}}}
            }}
            """;

    private static void same(List<String> differences, String what, Reply expected, Reply actual) {
        if (expected.status() != actual.status() || !expected.body().equals(actual.body())) {
            differences.add(what + "\n  executor: " + expected.status() + " " + expected.body() + "\n  tether:   " + actual.status() + " "
                    + actual.body());
        }
    }

    private static Reply customSlugsBlanked(Reply reply) {
        return new Reply(reply.status(), reply.headers(), reply.body().replaceAll("custom_[0-9a-z]+", "custom_"));
    }

    // ---- helpers ---------------------------------------------------------------------------

    /** server-everything over stdio, its org/default connection (1.5.9 makes none itself) and its catalog. */
    private static void register(ApiClient daemon) {
        register(daemon, Fixture.everythingCommand());
    }

    /** server-everything, run by {@code command}, as {@code everything} with the connection {@code org/default}, synced. */
    static void register(ApiClient daemon, List<String> command) {
        if (daemon.get("/api/integrations/everything").status() == 200) {
            return;
        }
        Reply added = daemon.post("/api/mcp/servers", Map.of("transport", "stdio", "name", "everything",
                "command", command.get(0), "args", command.subList(1, command.size())));
        assertThat(added.status()).as(added.toString()).isEqualTo(200);
        daemon.post("/api/connections", Map.of("owner", "org", "name", "default", "integration", "everything",
                "template", "none", "values", Map.of()));
        Reply refreshed = daemon.post("/api/connections/org/everything/default/refresh", null);
        assertThat(refreshed.status()).as(refreshed.toString()).isEqualTo(200);
    }

    private static Reply execute(ApiClient daemon, String code) {
        Reply reply = daemon.post("/api/executions", Map.of("code", code));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply;
    }

    /** An error's answer without its stack: status, isError and the first line of text and error. */
    private static String firstLines(JsonNode answer) {
        return answer.path("status").asString() + " " + answer.path("isError").asBoolean() + " "
                + answer.path("text").asString().lines().findFirst().orElse("") + " | "
                + answer.path("structured").path("status").asString() + " "
                + answer.path("structured").path("error").asString().lines().findFirst().orElse("") + " "
                + answer.path("structured").path("logs");
    }
}
