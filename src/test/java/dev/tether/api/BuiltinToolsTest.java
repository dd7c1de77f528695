package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

import dev.tether.calls.ToolCalls;
import dev.tether.calls.ToolNotFoundException;
import dev.tether.calls.builtin.InvalidToolArgumentsException;
import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.identity.Via;
import dev.tether.store.StoredTool;
import dev.tether.testsupport.ExecutorRecordings;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.OsProcesses;

/**
 * Executor's built-in tools in the running daemon: listed by {@code GET /api/tools} as 1.5.9 lists them (checked
 * against its OpenAPI document), found and called through {@link ToolCalls} by the names code uses, and answering
 * from Tether's own state: a real fixture server registered and connected over HTTP.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + BuiltinToolsTest.TOKEN, "tether.docker.reap-interval=1h" })
@DirtiesContext
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BuiltinToolsTest {

    static final String TOKEN = "builtin-test-token";
    private static final String RUN = UUID.randomUUID().toString().substring(0, 12);
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final String SLUG = "fixture";
    /** What a real Executor 1.5.9 daemon answered for each of its built-ins on {@code GET /api/tools/schema}, in its order. */
    private static final List<JsonNode> RECORDED = ExecutorRecordings.lines("/dev/tether/calls/builtin/executor-1.5.9-tool-schemas.jsonl")
            .stream().filter(line -> line.path("address").asString().startsWith("executor.")).toList();
    private static final List<String> LISTED = RECORDED.stream().map(line -> line.path("address").asString()).toList();

    private static final Path DATA_DIR = DataDirs.create("builtin");

    @LocalServerPort
    int port;

    @Autowired
    ToolCalls calls;

    private ApiClient api;
    private final ExecutorOpenApi executor = ExecutorOpenApi.load();

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @BeforeEach
    void client() {
        api = new ApiClient(port, TOKEN);
    }

    @BeforeAll
    void registerAndConnect() {
        api = new ApiClient(port, TOKEN);
        List<String> command = Fixture.command("--run=" + RUN, "--tools=2");
        Map<String, Object> server = new LinkedHashMap<>(Map.of("transport", "stdio", "name", "Fixture", "slug", SLUG,
                "command", command.get(0), "args", new ArrayList<>(command.subList(1, command.size()))));
        assertThat(api.post("/api/mcp/servers", server).status()).isEqualTo(200);
        assertThat(api.post("/api/connections", TetherClient.defaultConnection(SLUG)).status()).isEqualTo(200);
        assertThat(api.post("/api/connections/org/" + SLUG + "/default/refresh", null).status()).isEqualTo(200);
    }

    @AfterAll
    void removeServer() {
        try {
            api.delete("/api/integrations/" + SLUG);
            OsProcesses.awaitNoneMatching("--run=" + RUN, BOUND);
        }
        finally {
            OsProcesses.matching("--run=" + RUN).forEach(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void getToolsListsTheBuiltinsFirstAsExecutorDoes() {
        ApiClient.Reply reply = api.get("/api/tools");
        executor.assertConforms("get", "/tools", 200, reply.json());
        List<JsonNode> tools = reply.json().valueStream().toList();
        assertThat(tools.subList(0, LISTED.size())).extracting(tool -> tool.path("address").asString()).containsExactlyElementsOf(LISTED);
        JsonNode first = tools.get(0);
        assertThat(first.path("owner").asString()).isEqualTo("user");
        assertThat(first.path("integration").asString()).isEqualTo("executor");
        assertThat(first.path("connection").asString()).isEqualTo("coreTools");
        assertThat(first.path("name").asString()).isEqualTo("coreTools.integrations.list");
        assertThat(first.path("pluginId").asString()).isEqualTo("core-tools");
        assertThat(first.path("static").asBoolean()).isTrue();
        assertThat(tools.subList(0, LISTED.size())).allSatisfy(tool -> assertThat(tool.has("mayElicit") && tool.has("requiresApproval")
                && tool.has("approvalDescription")).as(tool.toString()).isTrue());
        assertThat(tools.subList(LISTED.size(), tools.size())).allSatisfy(tool -> {
            assertThat(tool.path("address").asString()).startsWith("tools." + SLUG + ".org.default.");
            assertThat(tool.get("static").isNull()).isTrue();
            assertThat(tool.get("mayElicit").isNull()).isTrue();
            assertThat(tool.get("requiresApproval").isBoolean()).isTrue();
        });

        assertThat(api.get("/api/tools?integration=executor").json().size()).isEqualTo(LISTED.size());
        assertThat(api.get("/api/tools?connection=coreTools").json().size()).isEqualTo(LISTED.size());
        assertThat(api.get("/api/tools?owner=org").json().valueStream().map(t -> t.path("integration").asString())).containsOnly(SLUG);
        assertThat(api.get("/api/tools?integration=" + SLUG).json().valueStream().map(t -> t.path("integration").asString())).containsOnly(SLUG);
        assertThat(api.get("/api/tools?query=saved%20connection").json().valueStream().map(t -> t.path("address").asString()))
                .contains("executor.coreTools.connections.list", "executor.coreTools.connections.remove");
    }

    /** Every built-in as Executor 1.5.9's daemon lists it: names, descriptions, plugins and approval annotations. */
    @Test
    void theBuiltinsAreExecutorsThirtyThree() {
        List<JsonNode> recorded = ExecutorRecordings.lines("/dev/tether/calls/builtin/executor-1.5.9-builtin-tools.jsonl");
        assertThat(recorded).hasSize(33);
        List<JsonNode> listed = api.get("/api/tools?integration=executor").json().valueStream().toList();
        assertThat(listed).containsExactlyElementsOf(recorded);
        assertThat(api.get("/api/tools?integration=executor&includeAnnotations=true").json().valueStream().toList())
                .containsExactlyElementsOf(recorded);
    }

    /** The schema route answers each built-in byte for byte as Executor 1.5.9 does, TypeScript included. */
    @Test
    void theSchemaRouteAnswersEachBuiltinAsExecutorDoes() {
        for (JsonNode expected : RECORDED) {
            ApiClient.Reply schema = api.get("/api/tools/schema?address=" + expected.path("address").asString());
            assertThat(schema.status()).as(schema.toString()).isEqualTo(200);
            assertThat(schema.body()).as(expected.path("address").asString()).isEqualTo(expected.toString());
        }
    }

    /** A built-in whose feature this server lacks is Executor's PluginNotLoadedError, never a made-up success. */
    @Test
    void aBuiltinThisServerDoesNotProvideIsAPluginNotLoadedError() {
        ApiClient.Reply called = api.post("/api/tools/call", Map.of("address", "executor.desktopSettings.openSettings", "args", Map.of()));
        assertThat(called.status()).as(called.toString()).isEqualTo(501);
        assertThat(called.body()).isEqualTo("{\"_tag\":\"PluginNotLoadedError\",\"address\":\"executor.desktopSettings.openSettings\","
                + "\"pluginId\":\"desktop-settings\"}");
        ApiClient.Reply executed = api.post("/api/executions", Map.of("code",
                "try { await tools.executor.desktopSettings.openSettings({}); return 'answered' } catch (e) { return e.message }"));
        assertThat(executed.json().at("/structured/result").asString()).startsWith("Internal tool error [");
    }

    @Test
    void theSchemaRouteAndTheCallRouteKnowTheBuiltins() {
        ApiClient.Reply schema = api.get("/api/tools/schema?address=executor.coreTools.connections.remove");
        executor.assertConforms("get", "/tools/schema", 200, schema.json());
        assertThat(schema.json().at("/inputSchema/required").valueStream().map(JsonNode::asString)).contains("owner", "integration", "name");

        ApiClient.Reply called = api.post("/api/tools/call", Map.of("address", "tools.executor.coreTools.connections.list",
                "args", Map.of("integration", SLUG)));
        assertThat(called.status()).as(called.toString()).isEqualTo(200);
        assertThat(called.json().at("/structuredContent/connections/0/address").asString()).isEqualTo("tools." + SLUG + ".org.default");
        assertThat(called.json().at("/content/0/text").asString()).contains("\"connections\"");
    }

    @Test
    void findDescribesABuiltinWithItsAnnotations() {
        StoredTool remove = calls.find("tools.executor.coreTools.connections.remove").block(BOUND);
        assertThat(remove.name()).isEqualTo("coreTools.connections.remove");
        assertThat(remove.serverName()).isEqualTo("executor.coreTools.connections.remove");
        assertThat(remove.requiresApproval()).isFalse();
        assertThat(calls.find("executor.coreTools.connections.remove").block(BOUND)).isEqualTo(remove);
        assertThat(calls.find("tools.search").block(BOUND).name()).isEqualTo("search");
    }

    @Test
    void sourcesListCountsEveryIntegrationsTools() {
        Object sources = calls.invoke("tools.executor.sources.list", Map.of("limit", 50)).block(BOUND);
        assertThat(sources).isEqualTo(nulled(Map.of("items", List.of(
                        Map.of("id", "executor", "name", "executor", "kind", "built-in", "canRemove", false, "canRefresh", false,
                                "toolCount", LISTED.size()),
                        Map.of("id", SLUG, "name", SLUG, "kind", "mcp", "canRemove", true, "canRefresh", true, "toolCount", 7)),
                "total", 2, "hasMore", false, "nextOffset", NULL)));
        Map<?, ?> page = (Map<?, ?>) calls.invoke("executor.sources.list", Map.of("limit", 1, "query", "mcp")).block(BOUND);
        assertThat(page.get("total")).isEqualTo(1);
        assertThat((List<?>) page.get("items")).singleElement().satisfies(item -> assertThat(((Map<?, ?>) item).get("id")).isEqualTo(SLUG));
    }

    @Test
    void searchFindsConnectedAndBuiltinTools() {
        Map<?, ?> echo = (Map<?, ?>) calls.invoke("tools.search", Map.of("query", "echo", "limit", 12)).block(BOUND);
        assertThat((List<?>) echo.get("items")).first().satisfies(hit -> {
            Map<?, ?> item = (Map<?, ?>) hit;
            assertThat(item.get("path")).isEqualTo(SLUG + ".org.default.echo");
            assertThat(item.get("integration")).isEqualTo(SLUG);
            assertThat((Integer) item.get("score")).isPositive();
        });
        Map<?, ?> builtin = (Map<?, ?>) calls.invoke("search", Map.of("query", "providers")).block(BOUND);
        assertThat(((List<?>) builtin.get("items")).stream().map(hit -> (Object) ((Map<?, ?>) hit).get("path")).toList())
                .contains("executor.coreTools.providers.list");
        assertThat(calls.invoke("tools.search", Map.of()).block(BOUND))
                .isEqualTo(nulled(Map.of("items", List.of(), "total", 0, "hasMore", false, "nextOffset", NULL)));
    }

    @Test
    void describeGivesTypeScriptShapesAndSuggestionsForAWrongPath() {
        Map<?, ?> echo = (Map<?, ?>) calls.invoke("tools.describe.tool", Map.of("path", SLUG + ".org.default.echo")).block(BOUND);
        assertThat(echo.get("name")).isEqualTo("echo");
        assertThat(echo.get("inputTypeScript")).isEqualTo("{ text: string; }");
        assertThat((String) echo.get("outputTypeScript")).startsWith("{ ok: true; data: { content: ").endsWith("| { ok: false; error: ToolError }");
        assertThat(((Map<?, ?>) echo.get("typeScriptDefinitions")).keySet().stream().map(String::valueOf).toList()).containsOnly("ToolError", "ToolHttpMeta");

        Map<?, ?> list = (Map<?, ?>) calls.invoke("describe.tool", Map.of("path", "executor.coreTools.connections.list")).block(BOUND);
        assertThat(list.get("inputTypeScript")).isEqualTo("{ integration?: string | null; owner?: \"org\" | \"user\" | null; }");

        Map<?, ?> search = (Map<?, ?>) calls.invoke("describe.tool", Map.of("path", "search")).block(BOUND);
        assertThat(search.get("outputTypeScript")).isEqualTo("{ items: ToolDiscoveryResult[]; total: number; hasMore: boolean; nextOffset: number | null; }");

        Map<?, ?> missing = (Map<?, ?>) calls.invoke("describe.tool", Map.of("path", SLUG + ".org.default.ech")).block(BOUND);
        assertThat(missing.get("name")).isEqualTo(SLUG + ".org.default.ech");
        Map<?, ?> notFound = (Map<?, ?>) missing.get("error");
        assertThat(notFound.get("code")).isEqualTo("tool_not_found");
        assertThat(notFound.get("message")).isEqualTo("Tool not found: " + SLUG + ".org.default.ech");
    }

    @Test
    void anMcpToolAnswersOkDataByAnyNameCodeUses() {
        Map<String, Object> expected = nulled(Map.of("ok", true, "data", Map.of("content", List.of(Map.of("type", "text", "text", "hi")))));
        for (String path : List.of("tools." + SLUG + ".org.default.echo", SLUG + ".org.default.echo", "tools.tools." + SLUG + ".org.default.echo")) {
            Map<?, ?> answer = (Map<?, ?>) calls.invoke(path, Map.of("text", "hi")).block(BOUND);
            assertThat(answer.get("ok")).as(path).isEqualTo(true);
            assertThat(((Map<?, ?>) answer.get("data")).get("content")).as(path).isEqualTo(((Map<?, ?>) expected.get("data")).get("content"));
        }
    }

    @Test
    void aListedBuiltinAnswersOkDataAndAWrongNameIsNotFound() {
        Map<?, ?> listed = (Map<?, ?>) calls.invoke("tools.executor.coreTools.connections.list", Map.of()).block(BOUND);
        assertThat(listed.get("ok")).isEqualTo(true);
        assertThat(((Map<?, ?>) listed.get("data")).get("connections")).asList().hasSize(1);
        assertThat(calls.invoke("executor.coreTools.providers.list", null).block(BOUND))
                .isEqualTo(Map.of("ok", true, "data", Map.of("providers", List.of("file", "onepassword"))));
        assertThat(calls.invoke("executor.coreTools.providers.items", Map.of("provider", "file")).block(BOUND))
                .isEqualTo(Map.of("ok", true, "data", Map.of("items", List.of())));
        assertThat(calls.invoke("executor.coreTools.providers.items", Map.of("provider", "onepassword")).block(BOUND))
                .isEqualTo(Map.of("ok", true, "data", Map.of("items", List.of())));

        Map<?, ?> refused = (Map<?, ?>) calls.invoke("executor.coreTools.connections.remove", Map.of("owner", "team")).block(BOUND);
        assertThat(refused.get("ok")).isEqualTo(false);
        assertThat(((Map<?, ?>) refused.get("error")).get("code")).isEqualTo("invalid_tool_arguments");

        assertThatThrownBy(() -> calls.invoke("tools." + SLUG + ".org.default.nope", Map.of()).block(BOUND))
                .isInstanceOf(ToolNotFoundException.class);
        assertThatThrownBy(() -> calls.invoke("tools.executor.coreTools.nope", Map.of()).block(BOUND))
                .isInstanceOf(ToolNotFoundException.class);
    }

    @Test
    void aRuntimeHelperRefusesBadArgumentsWithExecutorsWords() {
        assertThatThrownBy(() -> calls.invoke("tools.search", "echo").block(BOUND)).isInstanceOf(InvalidToolArgumentsException.class)
                .hasMessage("tools.search expects an object: { query?: string; namespace?: string; limit?: number; offset?: number }");
        assertThatThrownBy(() -> calls.invoke("tools.search", Map.of("query", "x", "limit", 0)).block(BOUND))
                .hasMessage("tools.search limit must be a positive number when provided");
        assertThatThrownBy(() -> calls.invoke("tools.describe.tool", Map.of()).block(BOUND)).hasMessage("describe.tool requires a path");
        assertThatThrownBy(() -> calls.invoke("tools.executor.sources.list", Map.of("offset", -1)).block(BOUND))
                .hasMessage("tools.executor.sources.list offset must be a non-negative number when provided");
    }

    /** Connections the built-ins remove are gone from the API too; the server's session with them. */
    @Test
    void connectionsRemoveRemovesThroughTheStore() {
        assertThat(api.post("/api/connections", Map.of("owner", "user", "name", "spare", "integration", SLUG, "template", "none",
                "values", Map.of())).status()).isEqualTo(200);
        // As the API's caller: `user` is the daemon's single user, whose the connection is.
        Map<?, ?> removed = (Map<?, ?>) calls.invoke("tools.executor.coreTools.connections.remove",
                Map.of("owner", "user", "integration", SLUG, "name", "spare"))
                .contextWrite(Principals.as(Principal.local(Principal.DEFAULT_TENANT, Via.DAEMON_TOKEN))).block(BOUND);
        assertThat(removed).isEqualTo(Map.of("ok", true, "data", Map.of("removed", true)));
        assertThat(api.get("/api/connections/user/" + SLUG + "/spare").status()).isEqualTo(404);
    }

    private static final Object NULL = new Object();

    /** A copy of {@code map} where {@link #NULL} stands for null, which {@code Map.of} cannot hold. */
    private static Map<String, Object> nulled(Map<String, Object> map) {
        Map<String, Object> copy = new LinkedHashMap<>();
        map.forEach((key, value) -> copy.put(key, value == NULL ? null : value));
        return copy;
    }
}
