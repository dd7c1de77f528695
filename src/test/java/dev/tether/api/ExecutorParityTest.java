package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
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
    private static final Duration START_BOUND = Duration.ofSeconds(60);

    @TempDir
    static Path dataDir;

    private static Process executor;
    private static int executorPort;

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", () -> dataDir.resolve("tether").toString());
    }

    @BeforeAll
    static void startExecutor() throws IOException, InterruptedException {
        Path cli = Fixture.projectRoot().resolve("src/test/clients/node_modules/.bin/executor");
        if (!Files.isExecutable(cli)) {
            String why = "the Executor 1.5.9 CLI is not installed (npm ci in src/test/clients): " + cli;
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail(why);
            }
            System.err.println("[WARNING] " + why + "; ExecutorParityTest skipped");
            Assumptions.abort(why);
        }
        Path home = Files.createDirectories(dataDir.resolve("executor-home"));
        Path scope = Files.createDirectories(dataDir.resolve("executor-scope"));
        executorPort = Fixture.freeLoopbackPort();
        ProcessBuilder builder = new ProcessBuilder(cli.toString(), "web", "--port", Integer.toString(executorPort),
                "--hostname", "127.0.0.1", "--auth-token", TOKEN, "--scope", scope.toString())
                .redirectErrorStream(true)
                .redirectOutput(dataDir.resolve("executor.log").toFile());
        builder.environment().put("HOME", home.toString());
        executor = builder.start();
        long deadline = System.nanoTime() + START_BOUND.toNanos();
        while (!answers(executorPort)) {
            if (!executor.isAlive() || System.nanoTime() > deadline) {
                fail("the Executor daemon did not start: " + Files.readString(dataDir.resolve("executor.log")));
            }
            Thread.sleep(200);
        }
    }

    @AfterAll
    static void stopExecutor() throws InterruptedException {
        if (executor != null) {
            executor.descendants().forEach(ProcessHandle::destroy);
            executor.destroy();
            if (!executor.waitFor(10, TimeUnit.SECONDS)) {
                executor.descendants().forEach(ProcessHandle::destroyForcibly);
                executor.destroyForcibly();
            }
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

    // ---- helpers ---------------------------------------------------------------------------

    /** server-everything over stdio, its org/default connection (1.5.9 makes none itself) and its catalog. */
    private static void register(ApiClient daemon) {
        if (daemon.get("/api/integrations/everything").status() == 200) {
            return;
        }
        List<String> command = Fixture.everythingCommand();
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

    private static boolean answers(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        }
        catch (IOException ex) {
            return false;
        }
    }
}
