package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.ExecutorCli;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.RequiresDocker;
import dev.tether.testsupport.RequiresExecutorCli;
import dev.tether.testsupport.TestImages;

/**
 * Executor's own CLI, version 1.5.9 from npm, against the packaged daemon on a loopback origin, as a new user would
 * drive it: {@code server add}, {@code tools sources}, {@code tools search}, {@code tools describe}, {@code call} of
 * server-everything running in Docker, a call that a policy pauses for approval and {@code resume} accepts after the
 * daemon was killed with {@code kill -9} and started again (the CLI takes the random execution id as it comes). The CLI
 * has a {@code HOME} of its own, where the daemon leaves Executor's discovery record; no {@code executor daemon}
 * may start, which the OS process table tells.
 */
@RequiresExecutorCli
@RequiresDocker
class ExecutorCliAcceptanceIT {

    private static final Pattern EXECUTION_ID = Pattern.compile("executionId: (\\S+)");
    private static final String RUN = UUID.randomUUID().toString().substring(0, 12);

    @TempDir
    Path home;

    @TempDir
    Path dataDir;

    private PackagedDaemon daemon;
    private ExecutorCli cli;

    @AfterEach
    void stop() throws InterruptedException {
        try {
            if (cli != null) {
                cli.stopDaemonsStarted(Duration.ofSeconds(20));
            }
        }
        finally {
            if (daemon != null) {
                daemon.close();
            }
            DockerContainers.awaitNoneWithLabel("tether.test.run", RUN, Duration.ofSeconds(30));
        }
    }

    @Test
    void theRealCliRunsToolsThroughTetherAndStartsNoDaemon() throws Exception {
        String image = TestImages.nodeImage();
        daemon = PackagedDaemon.start(PackagedDaemon.jarOrSkip(), dataDir, List.of(),
                Map.of("EXECUTOR_DATA_DIR", home.resolve(".executor").toString()));
        TetherClient tether = new TetherClient(daemon.port(), daemon.token());
        cli = new ExecutorCli(home).with("EXECUTOR_AUTH_TOKEN", daemon.token());

        ExecutorCli.Result added = cli.run("server", "add", "tether", daemon.url(), "--default");
        assertThat(added.exitCode()).as(added.output()).isZero();

        List<String> everything = Fixture.everythingDockerCommand(List.of("--label", "tether.test.run=" + RUN));
        assertThat(everything).contains(image);
        Map<String, Object> server = new LinkedHashMap<>(Map.of("transport", "stdio", "name", "Everything",
                "command", everything.get(0), "args", new ArrayList<>(everything.subList(1, everything.size()))));
        assertThat(tether.post("/api/mcp/servers", server).json().path("slug").asString()).isEqualTo("everything");
        assertThat(tether.post("/api/connections", TetherClient.defaultConnection("everything")).status()).isEqualTo(200);
        // the container's first start takes longer than the catalog's grace: list its tools once, as the app's refresh does
        assertThat(tether.post("/api/connections/org/everything/default/refresh", null).status()).isEqualTo(200);

        JsonNode sources = json(cli.run("tools", "sources"));
        assertThat(sources.path("items").valueStream().map(item -> item.path("id").asString())).containsExactly("everything", "executor");
        assertThat(sources.at("/items/0/toolCount").asInt()).isPositive();

        JsonNode found = json(cli.run("tools", "search", "echo"));
        assertThat(found.at("/items/0/path").asString()).isEqualTo("everything.org.default.echo");
        assertThat(found.at("/items/0/score").asInt()).isEqualTo(408);

        JsonNode described = json(cli.run("tools", "describe", "everything.org.default.echo"));
        assertThat(described.path("inputTypeScript").asString()).isEqualTo("{ message: string; }");

        JsonNode echoed = json(cli.run("call", "tools", "everything", "org", "default", "echo", "{\"message\":\"hi\"}"));
        assertThat(echoed.path("ok").asBoolean()).isTrue();
        assertThat(echoed.at("/data/content/0/text").asString()).isEqualTo("Echo: hi");

        ExecutorCli.Result help = cli.run("call", "--help");
        assertThat(help.stdout()).contains("executor").contains("tools");

        assertThat(tether.post("/api/policies", Map.of("owner", "org", "pattern", "everything.org.default.get_sum",
                "action", "require_approval")).status()).isEqualTo(200);
        ExecutorCli.Result paused = cli.run("call", "tools", "everything", "org", "default", "get_sum", "{\"a\":2,\"b\":3}");
        assertThat(paused.exitCode()).as(paused.output()).isZero();
        assertThat(paused.stdout()).contains("Execution paused: Approve tools.everything.org.default.get_sum?");
        Matcher id = EXECUTION_ID.matcher(paused.stdout());
        assertThat(id.find()).as(paused.output()).isTrue();
        assertThat(id.group(1)).matches("exec_[a-z2-7]{26}");

        // The pause outlives its daemon: killed, started again on the same data dir and port, where the CLI finds it.
        daemon.kill();
        daemon = PackagedDaemon.startOn(daemon.port(), PackagedDaemon.jarOrSkip(), dataDir, List.of(),
                Map.of("EXECUTOR_DATA_DIR", home.resolve(".executor").toString()));
        JsonNode resumed = json(cli.run("resume", "--execution-id", id.group(1), "--action", "accept", "--content", "{}"));
        assertThat(resumed.at("/data/content/0/text").asString()).isEqualTo("The sum of 2 and 3 is 5.");

        // server-everything's questions (MCP elicitation), listed because Tether's client can ask: the CLI pauses with
        // the requested schema, and resume's content reaches the server; decline ends it.
        ExecutorCli.Result form = cli.run("call", "tools", "everything", "org", "default", "trigger_elicitation_request", "{}");
        assertThat(form.exitCode()).as(form.output()).isZero();
        assertThat(form.stdout()).contains("Execution paused: Please provide inputs for the following fields:")
                .contains("Requested schema:").contains("\"required\": [");
        Matcher formId = EXECUTION_ID.matcher(form.stdout());
        assertThat(formId.find()).as(form.output()).isTrue();
        JsonNode answered = json(cli.run("resume", "--execution-id", formId.group(1), "--action", "accept", "--content",
                "{\"name\":\"Ada\",\"check\":true}"));
        assertThat(answered.at("/data/content/1/text").asString()).contains("- Name: Ada");

        ExecutorCli.Result url = cli.run("call", "tools", "everything", "org", "default", "trigger_url_elicitation",
                "{\"url\":\"https://example.com/login\"}");
        assertThat(url.stdout()).as(url.output()).contains("Open this URL in a browser:\nhttps://example.com/login");
        Matcher urlId = EXECUTION_ID.matcher(url.stdout());
        assertThat(urlId.find()).as(url.output()).isTrue();
        JsonNode declined = json(cli.run("resume", "--execution-id", urlId.group(1), "--action", "decline"));
        assertThat(declined.at("/data/content/0/text").asString()).startsWith("❌ User declined to open the URL");

        assertThat(cli.daemonsStarted()).as("executor daemons the CLI started").isEmpty();
    }

    private static JsonNode json(ExecutorCli.Result result) {
        assertThat(result.exitCode()).as(result.output()).isZero();
        assertThat(result.output()).doesNotContain("Starting daemon");
        return ApiClient.JSON.readTree(result.stdout());
    }
}
