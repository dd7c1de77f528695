package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.NodeClients;
import dev.tether.testsupport.NodeClients.Ended;
import dev.tether.testsupport.PythonClients;
import dev.tether.testsupport.RequiresTestClients;

/**
 * MCP 2026-07-28 on {@code /mcp} and {@code /mcp/tools}, judged by the official clients that speak it: the Python SDK
 * ({@code mcp} 2.3, pinned to 2026-07-28 and in {@code auto} mode, which probes {@code server/discover}) and the
 * TypeScript SDK v2 ({@code @modelcontextprotocol/client}). Code runs to its result with {@code resultType: complete};
 * a call that needs approval answers {@code input_required}, and the SDK's retry with the user's answer (accept or
 * decline) resumes it; server-everything's form question round-trips through {@code inputResponses}. The same
 * endpoints still speak the handshake era to a client that asks for it. The {@code requestState} opens only unaltered
 * and for the credential it was sealed for, and once.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + StatelessMcpTest.TOKEN, "tether.api.password=" + StatelessMcpTest.PASSWORD })
@DirtiesContext
@InProcess
@RequiresTestClients
class StatelessMcpTest {

    static final String TOKEN = "stateless-test-token";
    static final String PASSWORD = "stateless-test-password";
    private static final Path DATA_DIR = DataDirs.create("stateless");
    private static final Duration BOUND = Duration.ofSeconds(120);
    private static final String MODERN = "2026-07-28";
    /** A built-in that needs approval: with nothing configured, accepting it removes nothing and says so. */
    private static final String NEEDS_APPROVAL = "return await tools.executor.onepassword.removeConfig({})";
    private static final String SLUG = "stateless_fixture";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void cleanUp() {
        new TetherClient(port, TOKEN).delete("/api/mcp/servers/" + SLUG);
        new TetherClient(port, TOKEN).delete("/api/mcp/servers/everything");
    }

    @Test
    void thePythonSdkPinnedAndAutoRunsCodeAndAnswersApprovals() throws Exception {
        for (String mode : List.of(MODERN, "auto")) {
            Map<String, JsonNode> done = python("--mode=" + mode, "--code=return 6*7");
            assertThat(done.get("connected").path("version").asString()).as(mode).isEqualTo(MODERN);
            assertThat(done.get("tools").path("names").toString()).isEqualTo("[\"execute\"]");
            assertThat(done.get("tools").path("ttlMs").asLong()).isPositive();
            JsonNode result = done.get("result").path("result");
            assertThat(result.path("resultType").asString()).isEqualTo("complete");
            assertThat(result.path("content").get(0).path("text").asString()).isEqualTo("42");
            assertThat(result.path("structuredContent").path("result").asInt()).isEqualTo(42);

            Map<String, JsonNode> approved = python("--mode=" + mode, "--code=" + NEEDS_APPROVAL);
            assertThat(approved.get("asked").path("params").path("message").asString())
                    .startsWith("Remove the 1Password credential provider configuration");
            JsonNode ran = approved.get("result").path("result");
            assertThat(ran.path("resultType").asString()).isEqualTo("complete");
            assertThat(ran.path("structuredContent").path("result").toString()).isEqualTo("{\"ok\":true,\"data\":{\"removed\":true}}");

            Map<String, JsonNode> declined = python("--mode=" + mode, "--code=" + NEEDS_APPROVAL, "--answer=decline");
            assertThat(declined.get("result").path("result").path("isError").asBoolean()).isTrue();
            assertThat(declined.get("result").path("result").path("content").get(0).path("text").asString())
                    .contains("requires approval but the request was declined by the user");
        }
    }

    @Test
    void theTypeScriptSdkV2PinnedAndAutoRunsCodeAndAnswersApprovals() throws Exception {
        for (String mode : List.of(MODERN, "auto")) {
            Map<String, JsonNode> done = typescript("--mode=" + mode, "--code=return 6*7");
            assertThat(done.get("connected").path("version").asString()).as(mode).isEqualTo(MODERN);
            assertThat(done.get("tools").path("names").toString()).isEqualTo("[\"execute\"]");
            assertThat(done.get("result").path("result").path("structuredContent").path("result").asInt()).isEqualTo(42);

            Map<String, JsonNode> approved = typescript("--mode=" + mode, "--code=" + NEEDS_APPROVAL);
            assertThat(approved).containsKey("asked");
            assertThat(approved.get("result").path("result").path("structuredContent").path("result").toString())
                    .isEqualTo("{\"ok\":true,\"data\":{\"removed\":true}}");
        }
    }

    /** The same URL, asked for the handshake era, is Executor's {@code /mcp} as before: a session, execute and resume. */
    @Test
    void aClientOfTheHandshakeEraGetsItOnTheSameUrl() throws Exception {
        Map<String, JsonNode> python = python("--mode=legacy", "--code=return 6*7");
        assertThat(python.get("connected").path("version").asString()).isEqualTo("2025-11-25");
        assertThat(python.get("tools").path("names").toString()).isEqualTo("[\"execute\",\"resume\"]");
        assertThat(python.get("result").path("result").path("structuredContent").path("result").asInt()).isEqualTo(42);
        Map<String, JsonNode> typescript = typescript("--mode=legacy", "--code=return 6*7");
        assertThat(typescript.get("connected").path("version").asString()).isEqualTo("2025-11-25");
        assertThat(typescript.get("tools").path("names").toString()).isEqualTo("[\"execute\",\"resume\"]");
    }

    /** A server's own form question, server-everything's, goes to the Python SDK as an input request and back. */
    @Test
    void aServersFormQuestionRoundTripsThroughInputResponses() throws Exception {
        ExecutorParityTest.register(new ApiClient(port, TOKEN), Fixture.everythingCommand());
        Map<String, JsonNode> done = python("--mode=" + MODERN, "--content={\"name\":\"Linus\",\"check\":true}",
                "--code=return await tools.everything.org.default.trigger_elicitation_request({})");
        JsonNode asked = done.get("asked").path("params");
        assertThat(asked.path("requestedSchema").path("properties").has("name")).as(asked.toString()).isTrue();
        JsonNode result = done.get("result").path("result");
        assertThat(result.path("isError").asBoolean(false)).as(result.toString()).isFalse();
        assertThat(result.toString()).contains("Linus");
    }

    /** A client that declares no elicitation cannot answer input requests: it gets the pause as text, and resume. */
    @Test
    void aClientThatTakesNoQuestionsGetsThePauseAndTheResumeTool() throws Exception {
        JsonNode listed = post("/mcp", "Bearer " + TOKEN, "tools/list", null, Map.of());
        assertThat(listed.path("result").path("tools").findValuesAsString("name")).containsExactly("execute", "resume");
        JsonNode paused = post("/mcp", "Bearer " + TOKEN, "tools/call", "execute", Map.of("name", "execute",
                "arguments", Map.of("code", NEEDS_APPROVAL)));
        assertThat(paused.path("result").path("resultType").asString()).isEqualTo("complete");
        String executionId = paused.path("result").path("structuredContent").path("executionId").asString();
        assertThat(paused.path("result").path("structuredContent").path("status").asString()).isEqualTo("waiting_for_interaction");
        JsonNode resumed = post("/mcp", "Bearer " + TOKEN, "tools/call", "resume", Map.of("name", "resume",
                "arguments", Map.of("executionId", executionId, "action", "accept")));
        assertThat(resumed.path("result").path("structuredContent").path("result").toString())
                .isEqualTo("{\"ok\":true,\"data\":{\"removed\":true}}");
    }

    /**
     * The state of a paused execute opens only as it was sealed (an altered one is refused), only for the credential it
     * was sealed for (the same daemon's password is another caller), and resumes once.
     */
    @Test
    void aRequestStateOpensUnalteredForItsCallerOnce() throws Exception {
        Map<String, Object> capabilities = Map.of("elicitation", Map.of("form", Map.of()));
        Map<String, Object> call = Map.of("name", "execute", "arguments", Map.of("code", NEEDS_APPROVAL));
        JsonNode asked = post("/mcp", "Bearer " + TOKEN, "tools/call", "execute", call, capabilities);
        assertThat(asked.path("result").path("resultType").asString()).as(asked.toString()).isEqualTo("input_required");
        String key = asked.path("result").path("inputRequests").propertyNames().iterator().next();
        String state = asked.path("result").path("requestState").asString();
        Map<String, Object> answer = Map.of(key, Map.of("action", "accept", "content", Map.of()));

        String altered = state.substring(0, 10) + (state.charAt(10) == 'A' ? 'B' : 'A') + state.substring(11);
        JsonNode forged = post("/mcp", "Bearer " + TOKEN, "tools/call", "execute", retry(call, answer, altered), capabilities);
        assertThat(forged.path("error").path("message").asString()).isEqualTo("Invalid or expired requestState");

        String basic = "Basic " + Base64.getEncoder().encodeToString(("executor:" + PASSWORD).getBytes(StandardCharsets.UTF_8));
        JsonNode other = post("/mcp", basic, "tools/call", "execute", retry(call, answer, state), capabilities);
        assertThat(other.path("error").path("message").asString()).isEqualTo("Invalid or expired requestState");

        JsonNode resumed = post("/mcp", "Bearer " + TOKEN, "tools/call", "execute", retry(call, answer, state), capabilities);
        assertThat(resumed.path("result").path("resultType").asString()).isEqualTo("complete");
        assertThat(resumed.path("result").path("structuredContent").path("result").toString())
                .isEqualTo("{\"ok\":true,\"data\":{\"removed\":true}}");
        JsonNode again = post("/mcp", "Bearer " + TOKEN, "tools/call", "execute", retry(call, answer, state), capabilities);
        assertThat(again.path("result").path("isError").asBoolean()).isTrue();
        assertThat(again.path("result").path("content").get(0).path("text").asString()).startsWith("No paused execution: ");
    }

    /** {@code /mcp/tools} on 2026-07-28: the catalog's tools with a list TTL, a call, and a call's progress. */
    @Test
    void theCatalogToolsServeTheStatelessEra() throws Exception {
        new TetherClient(port, TOKEN).registerAndSync(SLUG, Fixture.command("--progress-tool"));
        String prefix = "tools." + SLUG + ".org.default.";
        Map<String, JsonNode> echoed = python(List.of("--url=http://127.0.0.1:" + port + "/mcp/tools", "--mode=" + MODERN,
                "--call=" + prefix + "echo", "--text=hello from Python"));
        assertThat(echoed.get("tools").path("names").toString()).contains(prefix + "echo", prefix + "progress");
        assertThat(echoed.get("tools").path("ttlMs").asLong()).isPositive();
        assertThat(echoed.get("result").path("result").path("content").get(0).path("text").asString()).isEqualTo("hello from Python");

        NodeClients.Run run = PythonClients.run("mcp_agent.py", List.of("--url=http://127.0.0.1:" + port + "/mcp/tools",
                "--token=" + TOKEN, "--mode=" + MODERN, "--call=" + prefix + "progress", "--progress"));
        Ended ended;
        try (run) {
            ended = run.awaitExit(BOUND);
        }
        List<Double> progress = new ArrayList<>();
        String answer = null;
        for (String line : ended.stdout()) {
            JsonNode step = JSON.readTree(line);
            if (step.path("step").asString().equals("progress")) {
                progress.add(step.path("progress").asDouble());
            }
            if (step.path("step").asString().equals("result")) {
                answer = step.path("result").path("content").get(0).path("text").asString();
            }
        }
        assertThat(ended.exitCode()).as(ended.stdout() + ended.stderr()).isZero();
        assertThat(progress).containsExactly(1.0, 2.0, 3.0);
        assertThat(answer).isEqualTo("done after 3 steps");
    }

    /**
     * {@code subscriptions/listen} replaces the session stream: it is acknowledged at once, and a catalog that changes
     * (a server registered and synced) reaches it as {@code notifications/tools/list_changed}, on both endpoints.
     */
    @Test
    void aListenStreamHearsThatTheToolsChanged() throws Exception {
        for (String path : List.of("/mcp/tools", "/mcp")) {
            Map<String, Object> withMeta = Map.of("notifications", Map.of("toolsListChanged", true), "_meta", Map.of(
                    "io.modelcontextprotocol/protocolVersion", MODERN, "io.modelcontextprotocol/clientCapabilities", Map.of()));
            HttpRequest listen = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream").header("Mcp-Method", "subscriptions/listen")
                    .header("MCP-Protocol-Version", MODERN)
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "id", 7,
                            "method", "subscriptions/listen", "params", withMeta)))).build();
            HttpResponse<java.util.stream.Stream<String>> stream = http.send(listen, HttpResponse.BodyHandlers.ofLines());
            assertThat(stream.statusCode()).isEqualTo(200);
            assertThat(stream.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/event-stream");
            java.util.concurrent.BlockingQueue<String> events = new java.util.concurrent.LinkedBlockingQueue<>();
            Thread reader = new Thread(() -> stream.body().filter(line -> line.startsWith("data:")).forEach(events::add));
            reader.setDaemon(true);
            reader.start();
            try {
                String ack = events.poll(BOUND.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
                assertThat(ack).as(path).contains("notifications/subscriptions/acknowledged", "\"toolsListChanged\":true");
                new TetherClient(port, TOKEN).registerAndSync(SLUG + "_" + path.length(), Fixture.command());
                String changed = events.poll(BOUND.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
                assertThat(changed).as(path).contains("notifications/tools/list_changed", "io.modelcontextprotocol/subscriptionId");
            } finally {
                stream.body().close();
                new TetherClient(port, TOKEN).delete("/api/mcp/servers/" + SLUG + "_" + path.length());
            }
        }
    }

    // ---- clients ---------------------------------------------------------------------------------

    private Map<String, JsonNode> python(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("--url=http://127.0.0.1:" + port + "/mcp"));
        all.addAll(List.of(args));
        return python(all);
    }

    private Map<String, JsonNode> python(List<String> args) throws Exception {
        List<String> all = new ArrayList<>(args);
        all.add("--token=" + TOKEN);
        try (NodeClients.Run run = PythonClients.run("mcp_agent.py", all)) {
            return steps(run.awaitExit(BOUND));
        }
    }

    private Map<String, JsonNode> typescript(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("--url=http://127.0.0.1:" + port + "/mcp", "--token=" + TOKEN));
        all.addAll(List.of(args));
        try (NodeClients.Run run = NodeClients.run("mcp-stateless-agent.mjs", all)) {
            return steps(run.awaitExit(BOUND));
        }
    }

    private static Map<String, JsonNode> steps(Ended ended) {
        Map<String, JsonNode> steps = new java.util.LinkedHashMap<>();
        for (String line : ended.stdout()) {
            JsonNode step = JSON.readTree(line);
            steps.put(step.path("step").asString(), step);
        }
        assertThat(steps).as("%s; stderr: %s", ended.stdout(), ended.stderr()).doesNotContainKey("failed");
        assertThat(ended.exitCode()).as("%s; stderr: %s", ended.stdout(), ended.stderr()).isZero();
        return steps;
    }

    // ---- raw HTTP --------------------------------------------------------------------------------

    private static Map<String, Object> retry(Map<String, Object> call, Map<String, Object> answers, String state) {
        Map<String, Object> params = new java.util.LinkedHashMap<>(call);
        params.put("inputResponses", answers);
        params.put("requestState", state);
        return params;
    }

    private JsonNode post(String path, String authorization, String method, String name, Map<String, Object> params) throws Exception {
        return post(path, authorization, method, name, params, Map.of());
    }

    /** One 2026-07-28 request as a client sends it: routing headers, and the version and capabilities in {@code _meta}. */
    private JsonNode post(String path, String authorization, String method, String name, Map<String, Object> params,
            Map<String, Object> capabilities) throws Exception {
        Map<String, Object> withMeta = new java.util.LinkedHashMap<>(params);
        withMeta.put("_meta", Map.of("io.modelcontextprotocol/protocolVersion", MODERN,
                "io.modelcontextprotocol/clientCapabilities", capabilities));
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Authorization", authorization)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("Mcp-Method", method)
                .header("MCP-Protocol-Version", MODERN)
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "id", 1,
                        "method", method, "params", withMeta))));
        if (name != null) {
            request.header("Mcp-Name", name);
        }
        HttpResponse<String> answer = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(answer.body());
    }
}
