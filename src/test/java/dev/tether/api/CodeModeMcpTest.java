package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.NodeClients;
import dev.tether.testsupport.NodeClients.Ended;
import dev.tether.testsupport.RealExecutor;
import dev.tether.testsupport.RequiresDocker;
import dev.tether.testsupport.PrometheusScrape;
import dev.tether.testsupport.RequiresTestClients;

/**
 * Executor's {@code /mcp} (code mode) on Tether, judged by the real Executor 1.5.9 side by side: the same agent (the
 * TypeScript MCP SDK, {@code mcp-code-agent.mjs}), the MCP Inspector CLI and raw HTTP say the same things to both
 * daemons, each with server-everything in a Docker container behind it, and must get the same answers: the two tools,
 * code that searches, describes and calls a tool, the three elicitation modes with server-everything's questions
 * (the SDK client's own handler answering in native mode), and the refusals. Execution ids and the server's own
 * random ids are the only things blanked. Where Tether refuses what Executor lets through (content that does not
 * match the requested schema; a resume from the web UI for an execution the session did not pause), Tether's
 * answer is asserted on its own.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + CodeModeMcpTest.TOKEN, "tether.docker.reap-interval=1h",
                "tether.agent.browser-approval-wait=1s" })
@DirtiesContext
@InProcess
@RequiresDocker
@RequiresTestClients
class CodeModeMcpTest {

    static final String TOKEN = "code-mode-test-token";
    private static final String TOOL = "tools.everything.org.default";
    private static final Duration BOUND = Duration.ofSeconds(180);
    /** Steps where Tether checks what Executor does not: asserted on their own, below. */
    private static final Set<String> TETHER_ONLY = Set.of("form refused content", "form resumed", "finished resumed");
    /**
     * Steps whose JSON Executor writes in the key order of its zod schemas (a server's requested schema, an MCP tool's
     * output type): compared as data, key order aside, with the text's schema block left out.
     */
    private static final Set<String> KEY_ORDER_ASIDE = Set.of("form paused", "describe");

    @TempDir
    static Path dataDir;

    private static RealExecutor executor;

    @LocalServerPort
    int port;

    private ApiClient real;
    private ApiClient tether;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", () -> dataDir.resolve("tether").toString());
    }

    @BeforeAll
    static void startExecutor() throws IOException, InterruptedException {
        executor = RealExecutor.start(dataDir, TOKEN, "CodeModeMcpTest");
    }

    @AfterAll
    static void stopExecutor() throws InterruptedException {
        if (executor != null) {
            executor.close();
        }
    }

    @BeforeEach
    void registerEverything() {
        real = new ApiClient(executor.port(), TOKEN);
        tether = new ApiClient(port, TOKEN);
        ExecutorParityTest.register(real, Fixture.everythingDockerCommand());
        ExecutorParityTest.register(tether, Fixture.everythingDockerCommand());
    }

    @Test
    void theSdkAgentGetsExecutorsAnswers() throws Exception {
        Map<String, JsonNode> theirs = agent("http://127.0.0.1:" + executor.port());
        Map<String, JsonNode> ours = agent("http://127.0.0.1:" + port);
        assertThat(ours.keySet()).isEqualTo(theirs.keySet());
        List<String> differences = new ArrayList<>();
        theirs.forEach((step, answer) -> {
            if (!TETHER_ONLY.contains(step) && !comparable(step, answer).equals(comparable(step, ours.get(step)))) {
                differences.add(step + "\n  executor: " + blanked(answer) + "\n  tether:   " + blanked(ours.get(step)));
            }
        });
        assertThat(differences).as("answers that differ from Executor 1.5.9's").isEmpty();

        JsonNode tools = ours.get("tools");
        assertThat(tools.size()).isEqualTo(2);
        assertThat(tools.get(0).path("description").asString()).contains("tools.search", "tools.describe.tool",
                "tools.executor.coreTools.connections.list", "`everything.org.default`");
        assertThat(ours.get("value").toString()).isEqualTo("{\"content\":[{\"type\":\"text\",\"text\":\"42\"}],"
                + "\"structuredContent\":{\"status\":\"completed\",\"result\":42,\"logs\":[]}}");
        assertThat(ours.get("call").at("/structuredContent/result/data/content/0/text").asString()).isEqualTo("Echo: hi from code");
        assertThat(ours.get("native form").toString()).contains("Name: Linus");
        assertThat(ours.get("native asked").size()).isEqualTo(2);

        // Executor hands content the schema refuses to the server; Tether says why and keeps the execution paused,
        // so that the right content still completes it.
        JsonNode refused = ours.get("form refused content");
        assertThat(refused.path("isError").asBoolean()).isTrue();
        assertThat(refused.at("/content/0/text").asString()).startsWith("`content` does not match the requested schema");
        assertThat(ours.get("form resumed").at("/structuredContent/result/data/content/1/text").asString()).contains("- Name: Ada");
        assertThat(ours.get("finished resumed").at("/content/0/text").asString()).matches("No paused execution: exec_[a-z2-7]{26}");
        assertThat(blanked(theirs.get("finished resumed"))).isEqualTo(blanked(ours.get("finished resumed")));
    }

    @Test
    void theInspectorCliGetsExecutorsAnswers() throws Exception {
        for (List<String> call : List.of(List.of("--method", "tools/list"),
                List.of("--method", "tools/call", "--tool-name", "execute", "--tool-arg", "code=return 6*7"),
                List.of("--method", "tools/call", "--tool-name", "execute", "--tool-arg",
                        "code=return await " + TOOL + ".get_sum({ a: 2, b: 3 })"),
                List.of("--method", "tools/call", "--tool-name", "resume", "--tool-arg", "executionId=exec_404", "--tool-arg",
                        "action=cancel"))) {
            String theirs = inspector("http://127.0.0.1:" + executor.port() + "/mcp", call);
            String ours = inspector("http://127.0.0.1:" + port + "/mcp", call);
            assertThat(ours).as(String.join(" ", call)).isEqualTo(theirs);
        }
    }

    /** The transport's refusals and the web UI's approval route, as raw HTTP sees them. */
    @Test
    void refusalsAreExecutors() throws Exception {
        Map<String, String> theirs = refusals(executor.port());
        Map<String, String> ours = refusals(port);
        assertThat(ours).isEqualTo(theirs);
    }

    /**
     * What Tether adds: a resume in browser mode with no answer yet says again where the user answers (bounded by
     * {@code tether.agent.browser-approval-wait}); an approval for an execution the session did not pause is
     * Executor's {@code ExecutionNotFoundError}; a session resumes none of another's executions; ending a session ends it.
     */
    @Test
    void sessionsKeepTheirOwnExecutions() throws Exception {
        Raw raw = new Raw(port);
        String browser = raw.initialize("browser", "{}");
        JsonNode paused = raw.call(browser, "execute", Map.of("code", "return await " + TOOL + ".trigger_elicitation_request({})"));
        String id = paused.at("/result/structuredContent/executionId").asString();
        assertThat(paused.at("/result/structuredContent/status").asString()).isEqualTo("user_approval_required");
        assertThat(paused.at("/result/structuredContent/approvalUrl").asString())
                .isEqualTo("http://127.0.0.1:" + port + "/resume/" + id + "?mcp_session_id=" + browser);
        JsonNode again = raw.call(browser, "resume", Map.of("executionId", id));
        assertThat(again.at("/result/structuredContent/status").asString()).as("no answer within the wait").isEqualTo("user_approval_required");

        String other = raw.initialize("model", "{}");
        JsonNode foreign = raw.call(other, "resume", Map.of("executionId", id, "action", "accept"));
        assertThat(foreign.at("/result/content/0/text").asString()).isEqualTo("No paused execution: " + id);
        Reply notHers = tether.post("/api/mcp-sessions/" + other + "/executions/" + id + "/resume", Map.of("action", "decline"));
        assertThat(notHers.status()).isEqualTo(404);
        assertThat(notHers.body()).isEqualTo("{\"_tag\":\"ExecutionNotFoundError\",\"executionId\":\"" + id + "\"}");

        // Executor answers a body that is no JSON with a 500; Tether with its answer to any other bad body
        Reply garbage = tether.post("/api/mcp-sessions/" + browser + "/executions/" + id + "/resume", "not json");
        assertThat(garbage.status()).isEqualTo(400);
        assertThat(garbage.body()).isEqualTo("{\"error\":\"Invalid approval response\"}");

        Reply declined = tether.post("/api/mcp-sessions/" + browser + "/executions/" + id + "/resume", Map.of("action", "decline"));
        assertThat(declined.json().path("text").asString()).isEqualTo("I've denied it");
        JsonNode done = raw.call(browser, "resume", Map.of("executionId", id));
        assertThat(done.at("/result/structuredContent/result/data/content/0/text").asString()).startsWith("❌ User declined");
        assertThat(tether.get("/api/executions/" + id).status()).as("nothing is left paused").isEqualTo(404);

        assertThat(raw.send("DELETE", browser, null).statusCode()).isEqualTo(200);
        assertThat(raw.send("POST", browser, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}").statusCode()).isEqualTo(404);
    }

    /**
     * An agent that leaves leaves nothing paused: ending a session ends the executions it paused, and a native
     * question whose call the agent cancels (no client answer to wait for) ends its execution at once.
     */
    @Test
    void anAgentThatLeavesLeavesNothingPaused() throws Exception {
        Raw raw = new Raw(port);
        String model = raw.initialize("model", "{}");
        JsonNode paused = raw.call(model, "execute", Map.of("code", "return await " + TOOL + ".trigger_elicitation_request({})"));
        String id = paused.at("/result/structuredContent/executionId").asString();
        assertThat(tether.get("/api/executions/" + id).status()).isEqualTo(200);
        assertThat(raw.send("DELETE", model, null).statusCode()).isEqualTo(200);
        assertThat(tether.get("/api/executions/" + id).status()).as("the session's pause ended with it").isEqualTo(404);

        // nothing else runs meanwhile: the native execution is the one more paused execution
        double before = paused();
        String nativeSession = raw.initialize("native", "{\"elicitation\":{}}");
        String call = ApiClient.JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "id", 77, "method", "tools/call", "params",
                Map.of("name", "execute", "arguments", Map.of("code", "return await " + TOOL + ".trigger_elicitation_request({})"))));
        var answer = raw.http.sendAsync(raw.post(nativeSession, call).header("Accept", "application/json, text/event-stream").build(),
                HttpResponse.BodyHandlers.ofString());
        await().atMost(BOUND).until(() -> paused() == before + 1);
        raw.send("POST", nativeSession, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":77}}");
        assertThat(answer.get(BOUND.toSeconds(), java.util.concurrent.TimeUnit.SECONDS).statusCode()).as("no answer is owed").isEqualTo(202);
        await().atMost(BOUND).until(() -> paused() == before);
    }

    // ---- helpers ---------------------------------------------------------------------------------

    /** Executions Tether holds paused now, as its metrics say. */
    private double paused() {
        return new PrometheusScrape(tether.get("/actuator/prometheus").body()).sum("tether_executions_paused");
    }

    private static Map<String, JsonNode> agent(String base) throws Exception {
        try (NodeClients.Run agent = NodeClients.run("mcp-code-agent.mjs", List.of("--url=" + base, "--token=" + TOKEN, "--tool=" + TOOL))) {
            Ended ended = agent.awaitExit(BOUND);
            assertThat(ended.exitCode()).as(ended.toString()).isZero();
            Map<String, JsonNode> answers = new LinkedHashMap<>();
            for (String line : ended.stdout()) {
                JsonNode step = ApiClient.JSON.readTree(line);
                answers.put(step.path("step").asString(), step.path("answer"));
            }
            return answers;
        }
    }

    private static String inspector(String url, List<String> call) throws Exception {
        List<String> args = new ArrayList<>(List.of("--cli", url, "--transport", "http", "--header", "Authorization: Bearer " + TOKEN,
                "--format", "json", "--quiet"));
        args.addAll(call);
        try (NodeClients.Run inspector = NodeClients.run("node_modules/.bin/mcp-inspector", args)) {
            Ended ended = inspector.awaitExit(BOUND);
            // the inspector exits 5 for a result with isError: the same for both daemons, or the comparison says so
            return ended.exitCode() + " " + blanked(ApiClient.JSON.readTree(String.join("\n", ended.stdout())));
        }
    }

    private static Map<String, String> refusals(int port) throws Exception {
        Raw raw = new Raw(port);
        Map<String, String> answers = new LinkedHashMap<>();
        String ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        answers.put("no session", raw.answer(raw.send("POST", null, ping)));
        answers.put("unknown session", raw.answer(raw.send("POST", "no-such-session", ping)));
        answers.put("json only", raw.answer(raw.http.send(raw.post(null, ping).header("Accept", "application/json").build(),
                HttpResponse.BodyHandlers.ofString())));
        String session = raw.initialize(null, "{\"elicitation\":{}}");
        answers.put("ping", raw.answer(raw.send("POST", session, ping)));
        answers.put("again initialize", raw.answer(raw.send("POST", session, Raw.INITIALIZE.formatted("{}"))));
        answers.put("not json", raw.answer(raw.send("POST", session, "{\"jsonrpc\":")));
        answers.put("not json-rpc", raw.answer(raw.send("POST", session, "{\"hello\":1}")));
        answers.put("unknown method", raw.answer(raw.send("POST", session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}")));
        answers.put("notification", raw.answer(raw.send("POST", session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")));
        answers.put("approval of unknown session", raw.answer(raw.http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/api/mcp-sessions/nope/executions/exec_1/resume"))
                .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"action\":\"accept\"}")).build(), HttpResponse.BodyHandlers.ofString())));
        answers.put("end", Integer.toString(raw.send("DELETE", session, null).statusCode()));
        answers.put("ended", raw.answer(raw.send("POST", session, ping)));
        return answers;
    }

    private static String comparable(String step, JsonNode answer) {
        if (!KEY_ORDER_ASIDE.contains(step)) {
            return blanked(answer);
        }
        String text = answer.at("/content/0/text").asString().replaceAll("(?s)Requested schema:\n\\{.*?\n}\n", "Requested schema: (aside)\n");
        JsonNode structured = answer.path("structuredContent");
        if ("describe".equals(step)) {
            // Executor's output type of an MCP tool without an output schema is the SDK's whole CallToolResult;
            // Tether's names the same fields in short (docs/api.md): compared without it
            structured = structured.deepCopy();
            ((tools.jackson.databind.node.ObjectNode) structured.path("result")).remove("outputTypeScript");
            text = "";
        }
        return blanked(ApiClient.JSON.valueToTree(Map.of("text", text, "structured", canonical(structured))));
    }

    /** {@code node} with the keys of every object sorted. */
    private static Object canonical(JsonNode node) {
        if (node.isObject()) {
            java.util.TreeMap<String, Object> sorted = new java.util.TreeMap<>();
            node.properties().forEach(entry -> sorted.put(entry.getKey(), canonical(entry.getValue())));
            return sorted;
        }
        if (node.isArray()) {
            List<Object> items = new ArrayList<>();
            node.forEach(item -> items.add(canonical(item)));
            return items;
        }
        return node;
    }

    /** Execution ids, UUIDs (server-everything's elicitation ids, session ids) and ports blanked. */
    private static String blanked(JsonNode answer) {
        // Executor counts exec_1, exec_2, …; Tether's ids are random
        return answer.toString().replaceAll("exec_([a-z2-7]{26}|\\d+)", "exec_N")
                .replaceAll("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "UUID")
                .replaceAll("127\\.0\\.0\\.1:\\d+", "127.0.0.1:PORT");
    }

    /** MCP over plain HTTP, as a client that shows every status and header. */
    private static final class Raw {

        static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + "\"2025-06-18\",\"capabilities\":%s,\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}";

        final HttpClient http = HttpClient.newHttpClient();
        final int port;
        int ids = 100;

        Raw(int port) {
            this.port = port;
        }

        String initialize(String mode, String capabilities) throws Exception {
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/mcp"
                            + (mode == null ? "" : "?elicitation_mode=" + mode)))
                    .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .POST(HttpRequest.BodyPublishers.ofString(INITIALIZE.formatted(capabilities))).build();
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            String session = response.headers().firstValue("mcp-session-id").orElseThrow();
            send("POST", session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
            return session;
        }

        JsonNode call(String session, String tool, Map<String, Object> arguments) throws Exception {
            String body = ApiClient.JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "id", ids++, "method", "tools/call",
                    "params", Map.of("name", tool, "arguments", arguments)));
            HttpResponse<String> response = send("POST", session, body);
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            return ApiClient.JSON.readTree(response.body());
        }

        HttpRequest.Builder post(String session, String body) {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/mcp"))
                    .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body));
            if (session != null) {
                request.header("Mcp-Session-Id", session);
            }
            return request;
        }

        HttpResponse<String> send(String method, String session, String body) throws Exception {
            HttpRequest.Builder request = method.equals("POST") ? post(session, body).header("Accept", "application/json, text/event-stream")
                    : HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/mcp")).header("Authorization", "Bearer " + TOKEN)
                            .header("Mcp-Session-Id", session).DELETE();
            return http.send(request.timeout(BOUND).build(), HttpResponse.BodyHandlers.ofString());
        }

        String answer(HttpResponse<String> response) {
            String body;
            try {
                body = response.body().isEmpty() ? "" : blanked(ApiClient.JSON.readTree(response.body()));
            } catch (RuntimeException notJson) {
                body = response.body();
            }
            return response.statusCode() + " " + response.headers().firstValue("content-type").orElse("-") + " " + body;
        }
    }
}
