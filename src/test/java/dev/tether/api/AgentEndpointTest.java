package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Implementation;
import io.modelcontextprotocol.spec.McpSchema.InitializeResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import reactor.core.Disposable;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.Fixture;

/**
 * The agent endpoint {@code /mcp} driven by a real MCP client (the official SDK's streamable-HTTP transport) and
 * by raw requests: the handshake, every stored tool under its address, calls on the warm session, errors as MCP
 * has them, and both ways an agent abandons a call (it disconnects, or it sends {@code notifications/cancelled})
 * reaching the server behind as {@code notifications/cancelled}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "tether.api.token=" + AgentEndpointTest.TOKEN)
@DirtiesContext
@InProcess
class AgentEndpointTest {

    static final String TOKEN = "agent-endpoint-test-token";

    private static final Path DATA_DIR = DataDirs.create("agent");
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final String SLUG = "agent_fixture";
    private static final String PREFIX = "tools." + SLUG + ".org.default.";

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @LocalServerPort
    int port;

    private TetherClient tether;
    private Path record;
    private McpAsyncClient agent;

    @BeforeEach
    void registerAServer() throws IOException {
        tether = new TetherClient(port, TOKEN);
        record = Files.createTempFile(DATA_DIR, "record-", ".log");
        tether.register(SLUG, Fixture.command("--record=" + record));
        assertThat(tether.post("/api/connections/org/" + SLUG + "/default/refresh", null).status()).isEqualTo(200);
        agent = McpClient.async(HttpClientStreamableHttpTransport.builder("http://127.0.0.1:" + port)
                        .endpoint("/mcp")
                        .requestBuilder(java.net.http.HttpRequest.newBuilder().header(HttpHeaders.AUTHORIZATION, "Bearer " + TOKEN))
                        .build())
                .clientInfo(new Implementation("test-agent", "1.0"))
                .requestTimeout(BOUND)
                .build();
    }

    @AfterEach
    void cleanUp() {
        agent.closeGracefully().block(BOUND);
        tether.delete("/api/mcp/servers/" + SLUG);
    }

    @Test
    void anAgentSeesEveryStoredToolByAddressAndCallsIt() throws IOException {
        InitializeResult hello = agent.initialize().block(BOUND);
        assertThat(hello.serverInfo().name()).isEqualTo("tether");
        assertThat(hello.capabilities().tools()).isNotNull();

        List<Tool> tools = agent.listTools().block(BOUND).tools();
        assertThat(tools).extracting(Tool::name).contains(PREFIX + "echo", PREFIX + "hang", PREFIX + "tool_1");
        Tool destructive = tools.stream().filter(tool -> tool.name().equals(PREFIX + "delete_everything")).findFirst().orElseThrow();
        assertThat(destructive.annotations().destructiveHint()).isTrue();
        assertThat(tools.stream().filter(tool -> tool.name().equals(PREFIX + "echo")).findFirst().orElseThrow().inputSchema())
                .containsKey("properties");

        CallToolResult echoed = agent.callTool(new CallToolRequest(PREFIX + "echo", Map.of("text", "from an agent"))).block(BOUND);
        assertThat(echoed.isError()).isNotEqualTo(Boolean.TRUE);
        assertThat(((TextContent) echoed.content().get(0)).text()).contains("from an agent");
        assertThat(agent.ping().block(BOUND)).isNotNull();
        assertThat(recorded()).as("one warm session served the sync and the agent").containsOnlyOnce("initialize");
    }

    @Test
    void failuresAreMcpErrorsOrToolErrors() {
        agent.initialize().block(BOUND);

        assertThatThrownBy(() -> agent.callTool(new CallToolRequest("tools.nope.org.default.echo", Map.of())).block(BOUND))
                .isInstanceOf(McpError.class).hasMessageContaining("Unknown tool");

        CallToolResult crashed = agent.callTool(new CallToolRequest(PREFIX + "crash", Map.of())).block(BOUND);
        assertThat(crashed.isError()).isTrue();
        assertThat(((TextContent) crashed.content().get(0)).text()).contains(SLUG, "exited with code 3");
    }

    @Test
    void anAgentThatDisconnectsCancelsItsCall() {
        Disposable call = tether.exchange(HttpMethod.POST, "/mcp", Map.of("jsonrpc", "2.0", "id", 41, "method", "tools/call",
                "params", Map.of("name", PREFIX + "hang"))).subscribe();
        await().atMost(BOUND).until(() -> recorded().contains("tools/call"));

        call.dispose();

        await().atMost(BOUND).until(() -> recorded().stream().anyMatch(line -> line.startsWith("notifications/cancelled")));
    }

    @Test
    void notificationsCancelledFromTheAgentCancelsItsCall() {
        CompletableFuture<Reply> call = tether.exchange(HttpMethod.POST, "/mcp", Map.of("jsonrpc", "2.0", "id", 42,
                "method", "tools/call", "params", Map.of("name", PREFIX + "hang"))).toFuture();
        await().atMost(BOUND).until(() -> recorded().contains("tools/call"));

        // Without a session id both requests share the empty session, as a sessionless agent's would.
        Reply cancel = tether.post("/mcp", Map.of("jsonrpc", "2.0", "method", "notifications/cancelled",
                "params", Map.of("requestId", 42, "reason", "the agent changed its mind")));

        assertThat(cancel.status()).isEqualTo(202);
        assertThat(call).succeedsWithin(BOUND).extracting(Reply::status).as("the cancelled call owes no answer").isEqualTo(202);
        await().atMost(BOUND).until(() -> recorded().stream().anyMatch(line -> line.startsWith("notifications/cancelled")));
    }

    @Test
    void badMessagesAndOtherMethodsAreRefused() {
        Reply garbage = tether.call(HttpMethod.POST, "/mcp", "this is not json".getBytes());
        assertThat(garbage.status()).isEqualTo(200);
        assertThat(garbage.json().path("error").path("code").asInt()).isEqualTo(-32700);

        Reply shapeless = tether.post("/mcp", Map.of("jsonrpc", "2.0", "id", 2, "method", "tools/call", "params", "echo"));
        assertThat(shapeless.json().path("error").path("code").asInt()).isEqualTo(-32602);
        assertThat(shapeless.json().path("error").path("message").asString()).contains("needs params {name, arguments?}");

        Reply unknown = tether.post("/mcp", Map.of("jsonrpc", "2.0", "id", 1, "method", "resources/list"));
        assertThat(unknown.json().path("error").path("code").asInt()).isEqualTo(-32601);

        assertThat(tether.get("/mcp").status()).as("GET /mcp without Accept: text/event-stream").isEqualTo(406);
        assertThat(tether.withToken(null).post("/mcp", Map.of("jsonrpc", "2.0", "id", 1, "method", "ping")).status())
                .isEqualTo(401);
    }

    private List<String> recorded() throws IOException {
        return Files.readAllLines(record);
    }
}
