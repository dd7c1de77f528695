package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.NodeClients;
import dev.tether.testsupport.NodeClients.Ended;
import dev.tether.testsupport.RequiresTestClients;

/**
 * Tether judged by the real clients agents use: the official TypeScript SDK over streamable HTTP ({@code /mcp})
 * and over the legacy HTTP+SSE transport ({@code /sse}), and the MCP Inspector CLI over both. Each initializes,
 * lists, calls, follows a call's progress, cancels a call (the server behind hears {@code notifications/cancelled})
 * and hears {@code notifications/tools/list_changed} on its stream when a catalog changes.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"tether.api.token=" + McpClientsTest.TOKEN, "tether.api.stream-keep-alive=2s"})
@DirtiesContext
@InProcess
@RequiresTestClients
class McpClientsTest {

    static final String TOKEN = "mcp-clients-test-token";

    private static final Path DATA_DIR = DataDirs.create("clients");
    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final String SLUG = "clients_fixture";
    private static final String OTHER = "clients_other";
    private static final String PREFIX = "tools." + SLUG + ".org.default.";

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @LocalServerPort
    int port;

    private TetherClient tether;
    private Path record;

    @BeforeEach
    void registerAServer() throws IOException {
        tether = new TetherClient(port, TOKEN);
        record = Files.createTempFile(DATA_DIR, "record-", ".log");
        tether.registerAndSync(SLUG, Fixture.command("--progress-tool", "--record=" + record));
    }

    @AfterEach
    void cleanUp() {
        tether.delete("/api/mcp/servers/" + SLUG);
        tether.delete("/api/mcp/servers/" + OTHER);
    }

    @Test
    void theTypeScriptSdkOverStreamableHttp() throws Exception {
        agentSession("streamable", "/mcp/tools");
    }

    @Test
    void theTypeScriptSdkOverLegacySse() throws Exception {
        agentSession("sse", "/sse");
    }

    @Test
    void theInspectorCliOverStreamableHttp() throws Exception {
        inspectorSession("http", "/mcp/tools");
    }

    @Test
    void theInspectorCliOverLegacySse() throws Exception {
        inspectorSession("sse", "/sse");
    }

    private void agentSession(String transport, String path) throws Exception {
        try (NodeClients.Run agent = NodeClients.run("mcp-agent.mjs", List.of("--transport=" + transport,
                "--url=" + tether.baseUrl() + path, "--token=" + TOKEN, "--prefix=" + PREFIX))) {
            JsonNode initialized = step(agent, "initialized");
            assertThat(initialized.path("server").asString()).isEqualTo("tether");
            assertThat(initialized.path("capabilities").path("tools").path("listChanged").asBoolean()).isTrue();

            assertThat(step(agent, "tools").path("names").toString()).contains(PREFIX + "echo", PREFIX + "progress", PREFIX + "hang");
            assertThat(step(agent, "echo").path("text").asString()).isEqualTo("hello from the TypeScript SDK");

            JsonNode progress = step(agent, "progress");
            assertThat(progress.path("text").asString()).isEqualTo("done after 3 steps");
            assertThat(progress.path("wire").toString()).as("every step on the wire, in order, then the answer")
                    .matches("\\[\\{\"progress\":1},\\{\"progress\":2},\\{\"progress\":3},\\{\"answer\":[^}]+}]");
            // The SDK drops a last step that it reads in one chunk with the answer (typescript-sdk#2580): what it
            // delivers is the steps in order, under the agent's own token, the last one perhaps missing.
            JsonNode delivered = progress.path("progress");
            assertThat(delivered.size()).as(delivered.toString()).isBetween(2, 3);
            for (int i = 0; i < delivered.size(); i++) {
                assertThat(delivered.get(i).path("progress").asInt()).isEqualTo(i + 1);
                assertThat(delivered.get(i).path("total").asInt()).isEqualTo(3);
                assertThat(delivered.get(i).path("message").asString()).isEqualTo("step " + (i + 1));
            }

            assertThat(step(agent, "cancelled").path("error").asString()).contains("changed its mind");
            await().atMost(BOUND).until(() -> recorded().stream().anyMatch(line -> line.startsWith("notifications/cancelled")));

            step(agent, "waiting-for-list-changed");
            // a new server, synced, changes the tools on offer
            tether.registerAndSync(OTHER, Fixture.command());
            step(agent, "list-changed");

            Ended ended = agent.awaitExit(BOUND);
            assertThat(ended.exitCode()).as(ended.toString()).isZero();
        }
    }

    private void inspectorSession(String transport, String path) throws Exception {
        JsonNode tools = inspector(path, transport, "--method", "tools/list");
        assertThat(tools.toString()).contains(PREFIX + "echo", PREFIX + "progress");

        JsonNode echoed = inspector(path, transport, "--method", "tools/call", "--tool-name", PREFIX + "echo",
                "--tool-arg", "text=hello from the inspector");
        assertThat(echoed.toString()).contains("hello from the inspector");

        // asked for progress, the answer comes as a stream of the progress and then the result
        JsonNode progressed = inspector(path, transport, "--method", "tools/call", "--tool-name", PREFIX + "progress",
                "--tool-args-json", "{\"steps\":2,\"ms\":100}", "--tool-metadata", "progressToken=inspector-1");
        assertThat(progressed.toString()).contains("done after 2 steps");
        assertThat(recorded()).as("Tether asked the server for the inspector's progress").contains("progress asked");
    }

    private JsonNode inspector(String path, String transport, String... call) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("--cli", tether.baseUrl() + path, "--transport", transport,
                "--header", "Authorization: Bearer " + TOKEN, "--format", "json", "--quiet"));
        args.addAll(List.of(call));
        try (NodeClients.Run inspector = NodeClients.run("node_modules/.bin/mcp-inspector", args)) {
            Ended ended = inspector.awaitExit(BOUND);
            assertThat(ended.exitCode()).as(ended.toString()).isZero();
            return TetherClient.JSON.readTree(String.join("\n", ended.stdout()));
        }
    }

    private static JsonNode step(NodeClients.Run agent, String name) throws InterruptedException {
        JsonNode line = TetherClient.JSON.readTree(agent.awaitLine(text -> text.contains("\"step\":\"" + name + "\"")
                || text.contains("\"step\":\"failed\""), BOUND));
        assertThat(line.path("step").asString()).as(line.toString()).isEqualTo(name);
        return line;
    }

    private List<String> recorded() throws IOException {
        return Files.readAllLines(record);
    }
}
