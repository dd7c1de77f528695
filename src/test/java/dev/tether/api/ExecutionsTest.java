package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpMethod;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import reactor.core.Disposable;
import tools.jackson.databind.JsonNode;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.Fixture;

/**
 * {@code POST /api/executions} against the running daemon with the fixture server behind it: results, logs and errors
 * shaped as Executor shapes them (validated against 1.5.9's schemas), the sandbox, approvals, policies, a client
 * that leaves mid-call, answers that code cannot forge, and the bounds on calls in flight and parked.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "tether.execution.timeout=5s", "tether.execution.max-output=64KB", "tether.execution.max-string-length=1048576",
        "tether.execution.max-pending-calls=8", "tether.execution.max-parked-calls=1",
        // at the daemon's own priority: on a busy test host, code at nice 19 can miss the time limit
        "tether.execution.nice=0", "tether.docker.reap-interval=1h" })
@DirtiesContext
@InProcess
class ExecutionsTest {

    private static final Path DATA_DIR = DataDirs.create("executions");
    private static final String RUN = UUID.randomUUID().toString();
    private static ExecutorOpenApi executor;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @LocalServerPort
    int port;

    private TetherClient tether;
    private Path work;

    @BeforeAll
    static void schemas() {
        executor = ExecutorOpenApi.load();
    }

    @AfterAll
    static void removeDataDir() {
        DataDirs.delete(DATA_DIR);
    }

    @BeforeEach
    void connect() throws IOException {
        tether = new TetherClient(port, DataDirs.token(DATA_DIR));
        work = Files.createDirectories(DATA_DIR.resolve("work-" + UUID.randomUUID()));
    }

    @AfterEach
    void cleanUp() {
        for (JsonNode integration : tether.get("/api/integrations").json()) {
            tether.delete("/api/integrations/" + integration.path("slug").asString());
        }
        for (JsonNode policy : tether.get("/api/policies").json()) {
            tether.call(HttpMethod.DELETE, "/api/policies/" + policy.path("id").asString(), Map.of("owner", policy.path("owner").asString()));
        }
        Leftovers.killProcesses(RUN);
    }

    @Test
    void toolCallAnswersWithExecutorsEnvelopeAndLogs() {
        String slug = fixture("fx");
        JsonNode answer = execute("console.log('calling', {n: 1}); const r = await tools." + slug
                + ".org.default.echo({text: 'hi'}); console.warn('done'); return r");
        assertThat(answer.path("status").asString()).isEqualTo("completed");
        assertThat(answer.path("isError").asBoolean()).isFalse();
        assertThat(answer.path("structured").path("result").toString())
                .isEqualTo("{\"ok\":true,\"data\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}");
        assertThat(answer.path("structured").path("logs").toString()).isEqualTo("[\"[log] calling {\\\"n\\\":1}\",\"[warn] done\"]");
        assertThat(answer.path("text").asString()).isEqualTo("""
                {
                  "ok": true,
                  "data": {
                    "content": [
                      {
                        "type": "text",
                        "text": "hi"
                      }
                    ]
                  }
                }

                Logs:
                [log] calling {"n":1}
                [warn] done""");
    }

    @Test
    void resultsAndErrorsReadAsExecutorWritesThem() {
        assertThat(executeRaw("return {a: 1, b: [1, 2], c: 'x'}")).isEqualTo("{\"status\":\"completed\",\"text\":\"{\\n  \\\"a\\\": 1,\\n  "
                + "\\\"b\\\": [\\n    1,\\n    2\\n  ],\\n  \\\"c\\\": \\\"x\\\"\\n}\",\"structured\":{\"status\":\"completed\",\"result\":"
                + "{\"a\":1,\"b\":[1,2],\"c\":\"x\"},\"logs\":[]},\"isError\":false}");
        assertThat(executeRaw("const x = 1;")).isEqualTo("{\"status\":\"completed\",\"text\":\"(no result)\",\"structured\":"
                + "{\"status\":\"completed\",\"result\":null,\"logs\":[]},\"isError\":false}");
        assertThat(executeRaw("return 'hello'")).isEqualTo("{\"status\":\"completed\",\"text\":\"hello\",\"structured\":"
                + "{\"status\":\"completed\",\"result\":\"hello\",\"logs\":[]},\"isError\":false}");
        assertThat(executeRaw("console.log('before'); throw new TypeError('bad type')")).isEqualTo("{\"status\":\"completed\","
                + "\"text\":\"Error: Error: bad type\\n\\nLogs:\\n[log] before\",\"structured\":{\"status\":\"error\",\"error\":"
                + "\"Error: bad type\",\"logs\":[\"[log] before\"]},\"isError\":true}");
        assertThat(executeRaw("throw 'plain'")).contains("\"error\":\"Error: plain\"");
        JsonNode syntax = execute("return (");
        assertThat(syntax.path("isError").asBoolean()).isTrue();
        assertThat(syntax.path("structured").path("error").asString()).matches("Expected an operand but found .+ \\(\\d+:\\d+\\)");
    }

    @Test
    void sandboxRefusesHostAccessAndLimitsTimeAndSpaceWithoutHarm() {
        Set<Long> childrenBefore = children();
        Map<String, String> attempts = new LinkedHashMap<>();
        Path escaped = work.resolve("escaped");
        attempts.put("return Java.type('java.lang.Runtime').getRuntime().exec('touch " + escaped + "')", "Java is not defined");
        attempts.put("return require('fs').readFileSync('/etc/passwd', 'utf8')", "require is not defined");
        attempts.put("return process.env", "process is not defined");
        attempts.put("return await fetch('http://127.0.0.1:" + port + "/api/integrations')", "fetch is disabled");
        attempts.put("return load('/etc/passwd')", "load is not defined");
        attempts.put("return await import('/etc/passwd')", "");
        attempts.put("return Polyglot.eval('js', '1')", "Polyglot is not defined");
        attempts.put("while (true) {}", "timed out after 5000ms");
        attempts.put("return 'x'.repeat(100 * 1024 * 1024).length", "Invalid string length");
        // Lines of 10 KB: the output limit is met in seven of them, not in a race with the 5 s timeout on a busy host.
        attempts.put("for (let i = 0; ; i++) console.log(i + 'x'.repeat(10000))", "console output exceeds the limit of 65536 bytes");
        attempts.forEach((code, message) -> {
            JsonNode answer = execute(code);
            assertThat(answer.path("isError").asBoolean()).as(code + " -> " + answer).isTrue();
            assertThat(answer.path("structured").path("error").asString()).as(code).contains(message);
        });
        assertThat(execute("return 1 + 1").path("structured").path("result").asInt()).as("the daemon still runs code").isEqualTo(2);
        assertThat(children()).as("nothing was spawned").isSubsetOf(childrenBefore);
        assertThat(escaped).doesNotExist();
    }

    @Test
    void theAnswerIsWrittenByTetherWhateverTheCodeReplaces() {
        Map<String, String> forgeries = new LinkedHashMap<>();
        forgeries.put("JSON.stringify = () => '{\"status\":\"forged\"}'; return {a: 1}", "{\"a\":1}");
        forgeries.put("JSON.stringify = () => '\"result\":{,'; JSON.parse = () => ({status: 'forged'}); return 'x'", "\"x\"");
        forgeries.put("return {toJSON() { return {status: 'forged'} }, a: 1}", "{\"a\":1}");
        forgeries.put("Object.prototype.toJSON = () => 'forged'; return {a: [1]}", "{\"a\":[1]}");
        forgeries.put("return {get status() { return '\",\"status\":\"forged' }, a: 1}", "{\"status\":\"\\\",\\\"status\\\":\\\"forged\",\"a\":1}");
        forgeries.put("return new Proxy({}, {ownKeys: () => ['status'], get: () => 'forged', "
                + "getOwnPropertyDescriptor: () => ({value: 'forged', enumerable: true, configurable: true})})", "{\"status\":\"forged\"}");
        forgeries.put("return {[Symbol.toPrimitive]() { return '\"}' }, n: 1, f() {}, u: undefined}", "{\"n\":1}");
        forgeries.put("Date.prototype.toISOString = () => 'forged'; Date.prototype.toJSON = () => 'forged'; return [new Date(0)]",
                "[\"1970-01-01T00:00:00.000Z\"]");
        forgeries.put("Promise.prototype.then = function () { return this }; return 1", "1");
        forgeries.put("String = () => 'forged'; Reflect.apply = () => 'forged'; return [undefined, () => 1, null, true]",
                "[null,null,null,true]");
        forgeries.put("return [0.1, 1e21, 1.5e-7, -0, 2 ** 53, 123456789012, NaN, 1 / 3, -1e-7, 5e-324]",
                "[0.1,1e+21,1.5e-7,0,9007199254740992,123456789012,null,0.3333333333333333,-1e-7,5e-324]");
        forgeries.forEach((code, result) -> {
            String raw = executeRaw(code);
            JsonNode answer = ApiClient.JSON.readTree(raw);
            assertThat(answer.propertyNames()).as(code).containsExactly("status", "text", "structured", "isError");
            assertThat(answer.path("structured").propertyNames()).as(code).containsExactly("status", "result", "logs");
            assertThat(raw).as(code).contains(",\"structured\":{\"status\":\"completed\",\"result\":" + result + ",\"logs\":[]},");
        });
        assertThat(execute("JSON.stringify = () => 'forged'; return {a: 'b'}").path("text").asString()).isEqualTo("{\n  \"a\": \"b\"\n}");
        JsonNode thrown = execute("throw {message: '\",\"status\":\"forged', toString() { throw new Error('no') }}");
        assertThat(thrown.path("structured").propertyNames()).containsExactly("status", "error", "logs");
        assertThat(thrown.path("structured").path("error").asString()).isEqualTo("Error: \",\"status\":\"forged");
        assertThat(execute("const a = {}; a.self = a; return a").path("structured").path("error").asString()).contains("circular");
        assertThat(execute("return {get boom() { throw new Error('from a getter') }}").path("structured").path("error").asString())
                .contains("from a getter");
    }

    @Test
    void callsInFlightAndCallsParkedAreBoundedWithErrorsThatNameTheLimit() {
        String slug = fixture("fxl");
        JsonNode flood = execute("const calls = []; for (let i = 0; i < 12; i++) calls.push(tools." + slug
                + ".org.default.echo({text: 'n' + i}).then(() => 'ok', (e) => e.message)); return await Promise.all(calls)");
        List<String> outcomes = flood.path("structured").path("result").valueStream().map(JsonNode::asString).toList();
        assertThat(outcomes).as(flood.toString()).hasSize(12).filteredOn("ok"::equals).hasSize(8);
        assertThat(outcomes.get(11)).contains("limit is 8").contains("tether.execution.max-pending-calls");
        // Code that goes on starting calls as many times again after being refused awaits none: it is stopped.
        JsonNode ignoring = execute("for (let i = 0; i < 100000; i++) tools." + slug + ".org.default.echo({text: 'n'}).catch(() => {});"
                + " await null; return 'never'");
        assertThat(ignoring.path("structured").path("error").asString()).as(ignoring.toString())
                .contains("started 8 more tool calls after reaching the limit of 8").contains("tether.execution.max-pending-calls");

        JsonNode parked = execute("const refused = []; for (let i = 0; i < 3; i++) tools." + slug
                + ".org.default.delete_everything({}).catch((e) => console.log(e.message)); await new Promise(() => {})");
        assertThat(parked.path("status").asString()).isEqualTo("paused");
        JsonNode done = resume(parked.path("structured").path("executionId").asString(), "decline");
        assertThat(done.path("structured").path("logs").valueStream().map(JsonNode::asString).toList())
                .as(done.toString()).hasSize(3)
                .filteredOn(line -> line.contains("limit is 1") && line.contains("tether.execution.max-parked-calls")).hasSize(2);
    }

    @Test
    void destructiveToolPausesUntilAccepted() {
        String slug = fixture("fxd");
        JsonNode paused = execute("console.log('pre'); const r = await tools." + slug
                + ".org.default.delete_everything({}); console.log('post'); return r");
        assertThat(paused.path("status").asString()).isEqualTo("paused");
        String id = paused.path("structured").path("executionId").asString();
        assertThat(id).startsWith("exec_");
        assertThat(paused.path("structured").path("interaction").path("message").asString())
                .isEqualTo("Approve tools." + slug + ".org.default.delete_everything?\n\nArguments:\n{}");

        Reply shown = tether.get("/api/executions/" + id);
        assertThat(shown.status()).isEqualTo(200);
        executor.assertConforms("get", "/executions/{executionId}", 200, shown.json());
        assertThat(shown.json().path("text").asString()).isEqualTo(paused.path("text").asString());

        // An idle worker of the code threads waits in CodeThreads' own loop for the next entry: that holds nothing.
        assertThat(Thread.getAllStackTraces().values()).as("a paused execution holds no thread").noneMatch(stack ->
                java.util.Arrays.stream(stack).anyMatch(frame -> frame.getClassName().startsWith("com.oracle.truffle.")
                        || frame.getClassName().startsWith("dev.tether.execution.")
                                && !frame.getClassName().startsWith("dev.tether.execution.CodeThreads")));

        JsonNode done = resume(id, "accept");
        assertThat(done.path("status").asString()).isEqualTo("completed");
        assertThat(done.path("structured").path("result").path("data").path("content").get(0).path("text").asString())
                .isEqualTo("nothing was deleted (fixture)");
        assertThat(done.path("structured").path("logs").toString()).isEqualTo("[\"[log] pre\",\"[log] post\"]");

        Reply again = tether.post("/api/executions/" + id + "/resume", Map.of("action", "accept"));
        assertThat(again.status()).isEqualTo(404);
        executor.assertConforms("post", "/executions/{executionId}/resume", 404, again.json());
        assertThat(again.json().path("_tag").asString()).isEqualTo("ExecutionNotFoundError");
        assertThat(tether.get("/api/executions/" + id).status()).isEqualTo(404);
    }

    @Test
    void declinedOrCancelledApprovalFailsTheCallInTheCode() {
        String slug = fixture("fxp");
        Reply policy = tether.post("/api/policies", Map.of("owner", "org", "pattern", slug + ".org.default.echo",
                "action", "require_approval"));
        assertThat(policy.status()).as(policy.toString()).isEqualTo(200);
        String code = "try { return await tools." + slug + ".org.default.echo({text: 'hi'}) } catch (e) { return 'caught: ' + e.message }";
        for (String action : List.of("decline", "cancel")) {
            JsonNode paused = execute(code);
            assertThat(paused.path("structured").path("interaction").path("message").asString()).startsWith("Approve tools." + slug
                    + ".org.default.echo? (matched policy: " + slug + ".org.default.echo)\n\nArguments:\n{\n  \"text\": \"hi\"\n}");
            JsonNode done = resume(paused.path("structured").path("executionId").asString(), action);
            assertThat(done.path("structured").path("result").asString()).isEqualTo("caught: Tool \"" + slug
                    + ".org.default.echo\" requires approval but the request was " + (action.equals("cancel") ? "cancelled" : "declined")
                    + " by the user.");
        }
        Reply blocked = tether.post("/api/policies", Map.of("owner", "user", "pattern", slug + ".*", "action", "block"));
        assertThat(blocked.status()).isEqualTo(200);
        JsonNode answer = execute("return await tools." + slug + ".org.default.echo({text: 'hi'})");
        assertThat(answer.path("structured").path("result").path("error").path("code").asString()).isEqualTo("tool_blocked");
        assertThat(tether.get("/api/tools?integration=" + slug).json()).as("blocked tools are not listed").isEmpty();
        assertThat(tether.get("/api/tools?integration=" + slug + "&includeBlocked=true").json().valueStream()
                .map(tool -> tool.path("name").asString())).contains("echo", "delete_everything");
    }

    @Test
    void clientThatLeavesCancelsTheExecutionAndItsCallsOnTheServer() throws IOException {
        Path record = work.resolve("record");
        String slug = tether.register("fxh", Fixture.command("--run=" + RUN, "--record=" + record));
        connection(slug);
        Disposable request = tether.exchange(HttpMethod.POST, "/api/executions",
                Map.of("code", "await Promise.all([tools." + slug + ".org.default.hang({}), tools." + slug
                        + ".org.default.slow({ms: 60000})]); return 'never'")).subscribe(reply -> { }, error -> { });
        await().atMost(Duration.ofSeconds(20)).until(() -> recorded(record).stream().filter("tools/call"::equals).count() == 2);
        request.dispose();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(recorded(record))
                .as("what the server received").filteredOn(line -> line.startsWith("notifications/cancelled ")).hasSize(2));
        assertThat(execute("return await tools." + slug + ".org.default.echo({text: 'warm'})").path("structured")
                .path("result").path("ok").asBoolean()).as("the session stays warm").isTrue();
    }

    @Test
    void clientThatLeavesStopsLoopingCodeAtOnce() {
        Disposable request = tether.exchange(HttpMethod.POST, "/api/executions", Map.of("code", "while (true) {}"))
                .subscribe(reply -> { }, error -> { });
        await().atMost(Duration.ofSeconds(10)).until(() -> runningCode() > 0);
        request.dispose();
        // However busy the host, it stops; how soon is docs/performance.md's figure, not a bound here.
        await().atMost(Duration.ofSeconds(60)).until(() -> runningCode() == 0);
        assertThat(execute("return 'still here'").path("structured").path("result").asString()).isEqualTo("still here");
    }

    // ---- helpers ---------------------------------------------------------------------------

    private String fixture(String slug) {
        tether.register(slug, Fixture.command("--run=" + RUN));
        connection(slug);
        return slug;
    }

    /** The connection the tools run on, whether or not registering made it; then its catalog. */
    private void connection(String slug) {
        tether.post("/api/connections", Map.of("owner", "org", "name", "default", "integration", slug, "template", "none",
                "values", Map.of()));
        Reply refreshed = tether.post("/api/connections/org/" + slug + "/default/refresh", null);
        assertThat(refreshed.status()).as(refreshed.toString()).isEqualTo(200);
    }

    private String executeRaw(String code) {
        Reply reply = tether.post("/api/executions", Map.of("code", code));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        executor.assertConforms("post", "/executions", 200, reply.json());
        return reply.body();
    }

    private JsonNode execute(String code) {
        return ApiClient.JSON.readTree(executeRaw(code));
    }

    private JsonNode resume(String id, String action) {
        Reply reply = tether.post("/api/executions/" + id + "/resume", Map.of("action", action));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        executor.assertConforms("post", "/executions/{executionId}/resume", 200, reply.json());
        return reply.json();
    }

    private static List<String> recorded(Path record) {
        try {
            return Files.exists(record) ? Files.readAllLines(record) : List.of();
        }
        catch (IOException ex) {
            return List.of();
        }
    }

    /** Threads of the executions' pool that are inside JavaScript now. */
    private static long runningCode() {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(thread -> thread.getKey().getName().matches("tether-js-\\d+"))
                .filter(thread -> java.util.Arrays.stream(thread.getValue()).anyMatch(frame -> frame.getClassName().startsWith("com.oracle.truffle.")))
                .count();
    }

    private static Set<Long> children() {
        return ProcessHandle.current().descendants().map(ProcessHandle::pid).collect(Collectors.toSet());
    }
}
