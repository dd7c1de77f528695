package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.NodeClients;
import dev.tether.testsupport.RequiresTestClients;

/**
 * A remote server that speaks MCP 2026-07-28 only (the TypeScript SDK v2 with {@code legacy: 'reject'}, which refuses
 * {@code initialize}) as a source behind Tether: it is healthy, its tools are listed and called, and a tool that answers
 * {@code input_required} pauses an execution whose question the web UI's approval page reads
 * ({@code GET /api/executions/{id}}) and answers ({@code POST …/resume}, as the CLI's {@code resume} does); the
 * answer goes back in the retry's {@code inputResponses} and the execution completes with the server's answer. The
 * server's log shows Tether never tried the handshake.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + StatelessUpstreamTest.TOKEN })
@DirtiesContext
@InProcess
@RequiresTestClients
class StatelessUpstreamTest {

    static final String TOKEN = "stateless-upstream-test-token";
    private static final Path DATA_DIR = DataDirs.create("stateless-upstream");
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final String SLUG = "modern";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @LocalServerPort
    int port;

    private NodeClients.Run server;
    private TetherClient tether;

    @BeforeEach
    void startTheServer() throws Exception {
        server = NodeClients.run("mcp-stateless-server.mjs", List.of());
        int serverPort = JSON.readTree(server.awaitLine(line -> line.contains("listening"), BOUND)).path("listening").asInt();
        tether = new TetherClient(port, TOKEN);
        Reply added = tether.post("/api/mcp/servers", Map.of("transport", "remote", "name", "Modern", "slug", SLUG,
                "endpoint", "http://127.0.0.1:" + serverPort + "/mcp", "remoteTransport", "streamable-http"));
        assertThat(added.status()).as(added.toString()).isEqualTo(200);
        assertThat(tether.post("/api/connections", TetherClient.defaultConnection(SLUG)).status()).isEqualTo(200);
    }

    @AfterEach
    void stopTheServer() {
        tether.delete("/api/mcp/servers/" + SLUG);
        server.close();
    }

    @Test
    void itsToolsListAndRunAndItsQuestionPausesAnExecution() throws Exception {
        Reply synced = tether.post("/api/connections/org/" + SLUG + "/default/refresh", null);
        assertThat(synced.status()).as(synced.toString()).isEqualTo(200);
        Reply health = tether.post("/api/connections/org/" + SLUG + "/default/health", null);
        assertThat(health.json().path("status").asString()).as(health.toString()).isEqualTo("healthy");
        Reply tools = tether.get("/api/tools?integration=" + SLUG);
        assertThat(tools.json().findValuesAsString("name")).contains("echo", "confirm");

        Reply echoed = tether.post("/api/tools/call", Map.of("address", "tools." + SLUG + ".org.default.echo",
                "args", Map.of("text", "over the stateless era")));
        assertThat(echoed.status()).as(echoed.toString()).isEqualTo(200);
        assertThat(echoed.body()).contains("over the stateless era");

        Reply paused = tether.post("/api/executions", Map.of("code",
                "return await tools." + SLUG + ".org.default.confirm({item: 'the release'})"));
        assertThat(paused.json().path("status").asString()).as(paused.toString()).isEqualTo("paused");
        String id = paused.json().path("structured").path("executionId").asString();
        // what the web UI's approval page (/resume/<id>) reads, then posts
        Reply question = tether.get("/api/executions/" + id);
        assertThat(question.status()).isEqualTo(200);
        assertThat(question.json().path("structured").path("interaction").path("message").asString()).isEqualTo("Who confirms the release?");
        assertThat(question.json().path("structured").path("interaction").path("requestedSchema").path("properties").has("name")).isTrue();
        Reply resumed = tether.post("/api/executions/" + id + "/resume", Map.of("action", "accept", "content", Map.of("name", "Ada")));
        assertThat(resumed.status()).as(resumed.toString()).isEqualTo(200);
        assertThat(resumed.json().path("status").asString()).isEqualTo("completed");
        assertThat(resumed.json().path("structured").path("result").toString()).contains("confirmed the release for Ada");

        NodeClients.Ended log = stopped();
        assertThat(log.stdout()).as("what the server was asked").noneMatch(line -> line.contains("\"era\":\"legacy\""))
                .anyMatch(line -> line.contains("\"method\":\"server/discover\""));
    }

    private NodeClients.Ended stopped() throws InterruptedException {
        server.close();
        return server.awaitExit(BOUND);
    }
}
