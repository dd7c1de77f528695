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
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.JsonNode;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.Fixture;
import dev.tether.agent.AgentEndpoint;

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
        tether.registerAndSync(SLUG, Fixture.command("--progress-tool", "--record=" + record));
        agent = McpClient.async(HttpClientStreamableHttpTransport.builder("http://127.0.0.1:" + port)
                        .endpoint("/mcp/tools")
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
        Disposable call = tether.exchange(HttpMethod.POST, "/mcp/tools", Map.of("jsonrpc", "2.0", "id", 41, "method", "tools/call",
                "params", Map.of("name", PREFIX + "hang"))).subscribe();
        await().atMost(BOUND).until(() -> recorded().contains("tools/call"));

        call.dispose();

        await().atMost(BOUND).until(() -> recorded().stream().anyMatch(line -> line.startsWith("notifications/cancelled")));
    }

    @Test
    void notificationsCancelledFromTheAgentCancelsItsCall() {
        CompletableFuture<Reply> call = tether.exchange(HttpMethod.POST, "/mcp/tools", Map.of("jsonrpc", "2.0", "id", 42,
                "method", "tools/call", "params", Map.of("name", PREFIX + "hang"))).toFuture();
        await().atMost(BOUND).until(() -> recorded().contains("tools/call"));

        // Without a session id both requests share the empty session, as a sessionless agent's would.
        Reply cancel = tether.post("/mcp/tools", Map.of("jsonrpc", "2.0", "method", "notifications/cancelled",
                "params", Map.of("requestId", 42, "reason", "the agent changed its mind")));

        assertThat(cancel.status()).isEqualTo(202);
        assertThat(call).succeedsWithin(BOUND).extracting(Reply::status).as("the cancelled call owes no answer").isEqualTo(202);
        await().atMost(BOUND).until(() -> recorded().stream().anyMatch(line -> line.startsWith("notifications/cancelled")));
    }

    @Test
    void badMessagesAndOtherMethodsAreRefused() {
        Reply garbage = tether.call(HttpMethod.POST, "/mcp/tools", "this is not json".getBytes());
        assertThat(garbage.status()).isEqualTo(200);
        assertThat(garbage.json().path("error").path("code").asInt()).isEqualTo(-32700);

        Reply shapeless = tether.post("/mcp/tools", Map.of("jsonrpc", "2.0", "id", 2, "method", "tools/call", "params", "echo"));
        assertThat(shapeless.json().path("error").path("code").asInt()).isEqualTo(-32602);
        assertThat(shapeless.json().path("error").path("message").asString()).contains("needs params {name, arguments?}");

        Reply unknown = tether.post("/mcp/tools", Map.of("jsonrpc", "2.0", "id", 1, "method", "resources/list"));
        assertThat(unknown.json().path("error").path("code").asInt()).isEqualTo(-32601);

        assertThat(tether.get("/mcp/tools").status()).as("GET /mcp without Accept: text/event-stream").isEqualTo(406);
        assertThat(tether.withToken(null).post("/mcp/tools", Map.of("jsonrpc", "2.0", "id", 1, "method", "ping")).status())
                .isEqualTo(401);
    }

    @Test
    void aCallThatAsksForProgressIsAnsweredAsAStreamOfItsProgressThenItsResult() {
        Map<String, Object> call = Map.of("jsonrpc", "2.0", "id", 7, "method", "tools/call", "params", Map.of(
                "name", PREFIX + "progress", "arguments", Map.of("steps", 3, "ms", 50), "_meta", Map.of("progressToken", "agent-7")));

        List<ServerSentEvent<String>> events = agentWeb().post().uri("/mcp/tools")
                .header(HttpHeaders.ACCEPT, "application/json, text/event-stream")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(call)
                .exchangeToFlux(response -> {
                    assertThat(response.headers().contentType()).hasValueSatisfying(type -> assertThat(type.isCompatibleWith(MediaType.TEXT_EVENT_STREAM)).isTrue());
                    return response.bodyToFlux(new ParameterizedTypeReference<ServerSentEvent<String>>() {
                    });
                })
                .filter(event -> event.data() != null)
                .collectList().block(BOUND);

        assertThat(events).extracting(ServerSentEvent::event).containsOnly("message");
        List<JsonNode> messages = events.stream().map(event -> TetherClient.JSON.readTree(event.data())).toList();
        assertThat(messages).hasSize(4);
        for (int i = 0; i < 3; i++) {
            assertThat(messages.get(i).path("method").asString()).isEqualTo("notifications/progress");
            assertThat(messages.get(i).path("params").path("progressToken").asString()).as("the agent's token, not Tether's").isEqualTo("agent-7");
            assertThat(messages.get(i).path("params").path("progress").asInt()).isEqualTo(i + 1);
        }
        assertThat(messages.get(3).path("id").asInt()).isEqualTo(7);
        assertThat(messages.get(3).path("result").path("content").get(0).path("text").asString()).isEqualTo("done after 3 steps");

        Reply plain = tether.post("/mcp/tools", call);
        assertThat(plain.headers().getContentType()).as("an agent that cannot read a stream gets JSON")
                .isEqualTo(MediaType.APPLICATION_JSON);
        assertThat(plain.json().path("result").path("content").get(0).path("text").asString()).isEqualTo("done after 3 steps");
    }

    @Test
    void anAgentThatLeavesAStreamedCallCancelsIt() {
        Disposable call = agentWeb().post().uri("/mcp/tools").header(HttpHeaders.ACCEPT, "text/event-stream")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("jsonrpc", "2.0", "id", 8, "method", "tools/call", "params", Map.of(
                        "name", PREFIX + "progress", "arguments", Map.of("steps", 1000, "ms", 100), "_meta", Map.of("progressToken", 1))))
                .retrieve().bodyToFlux(String.class).subscribe();
        await().atMost(BOUND).until(() -> recorded().contains("tools/call"));

        call.dispose();

        await().atMost(BOUND).until(() -> recorded().stream().anyMatch(line -> line.startsWith("notifications/cancelled")));
    }

    @Test
    void theSessionStreamSaysWhenToolsChangeAndEndsWithTheSession() {
        String session = "session-" + System.nanoTime();
        Flux<ServerSentEvent<String>> stream = agentWeb().get().uri("/mcp/tools").header(AgentEndpoint.SESSION_HEADER, session)
                .header(HttpHeaders.ACCEPT, "text/event-stream")
                .retrieve().bodyToFlux(new ParameterizedTypeReference<ServerSentEvent<String>>() {
                });
        java.util.concurrent.BlockingQueue<ServerSentEvent<String>> received = new java.util.concurrent.LinkedBlockingQueue<>();
        CompletableFuture<Void> ended = new CompletableFuture<>();
        Disposable open = stream.subscribe(received::add, ended::completeExceptionally, () -> ended.complete(null));
        try {
            await().atMost(BOUND).until(() -> received.stream().anyMatch(event -> "keep-alive".equals(event.comment())));

            tether.delete("/api/mcp/servers/" + SLUG); // its tools are gone

            await().atMost(BOUND).until(() -> received.stream().anyMatch(event -> event.data() != null
                    && event.data().contains("notifications/tools/list_changed")));

            assertThat(agentWeb().delete().uri("/mcp/tools").header(AgentEndpoint.SESSION_HEADER, session)
                    .exchangeToMono(response -> Mono.just(response.statusCode().value())).block(BOUND)).isEqualTo(200);
            assertThat(ended).as("DELETE /mcp ends the session's stream").succeedsWithin(BOUND);
        } finally {
            open.dispose();
        }
    }

    @Test
    void aNewStreamOfASessionEndsTheOneBefore() {
        String session = "session-" + System.nanoTime();
        CompletableFuture<Void> firstEnded = new CompletableFuture<>();
        java.util.concurrent.BlockingQueue<ServerSentEvent<String>> toFirst = new java.util.concurrent.LinkedBlockingQueue<>();
        Disposable first = sessionStream(session).subscribe(toFirst::add, firstEnded::completeExceptionally, () -> firstEnded.complete(null));
        java.util.concurrent.BlockingQueue<ServerSentEvent<String>> received = new java.util.concurrent.LinkedBlockingQueue<>();
        Disposable second = reactor.core.Disposables.disposed();
        try {
            await().atMost(BOUND).until(() -> !toFirst.isEmpty());
            assertThat(firstEnded).isNotDone();
            second = sessionStream(session).subscribe(received::add);

            assertThat(firstEnded).as("a message goes out on one stream only").succeedsWithin(BOUND);
            await().atMost(BOUND).until(() -> received.stream().anyMatch(event -> "keep-alive".equals(event.comment())));
        } finally {
            first.dispose();
            second.dispose();
        }
    }

    private Flux<ServerSentEvent<String>> sessionStream(String session) {
        return agentWeb().get().uri("/mcp/tools").header(AgentEndpoint.SESSION_HEADER, session)
                .header(HttpHeaders.ACCEPT, "text/event-stream")
                .retrieve().bodyToFlux(new ParameterizedTypeReference<ServerSentEvent<String>>() {
                });
    }

    @Test
    void theLegacyStreamNamesWhereToPostAndAnswersThere() {
        java.util.concurrent.BlockingQueue<ServerSentEvent<String>> received = new java.util.concurrent.LinkedBlockingQueue<>();
        Disposable open = agentWeb().get().uri("/sse").header(HttpHeaders.ACCEPT, "text/event-stream")
                .retrieve().bodyToFlux(new ParameterizedTypeReference<ServerSentEvent<String>>() {
                }).subscribe(received::add);
        try {
            await().atMost(BOUND).until(() -> received.stream().anyMatch(event -> "endpoint".equals(event.event())));
            String endpoint = received.stream().filter(event -> "endpoint".equals(event.event())).findFirst().orElseThrow().data();
            assertThat(endpoint).startsWith("/messages?sessionId=");

            Reply taken = tether.post(endpoint, Map.of("jsonrpc", "2.0", "id", 3, "method", "tools/call",
                    "params", Map.of("name", PREFIX + "echo", "arguments", Map.of("text", "over the old transport"))));
            assertThat(taken.status()).isEqualTo(202);
            await().atMost(BOUND).until(() -> received.stream().anyMatch(event -> event.data() != null
                    && event.data().contains("over the old transport")));

            assertThat(tether.post("/messages?sessionId=nobody", Map.of("jsonrpc", "2.0", "id", 1, "method", "ping")).status())
                    .isEqualTo(404);
            assertThat(tether.post(endpoint, "not json".getBytes()).status()).isEqualTo(400);
            assertThat(tether.withToken(null).post(endpoint, Map.of("jsonrpc", "2.0", "id", 1, "method", "ping")).status())
                    .isEqualTo(401);
            assertThat(tether.withToken(null).get("/sse").status()).isEqualTo(401);
        } finally {
            open.dispose();
        }
    }

    /** A client of the agent endpoint that reads streams as they come. */
    private WebClient agentWeb() {
        return WebClient.builder().baseUrl(tether.baseUrl())
                .clientConnector(new ReactorClientHttpConnector(HttpClient.create(ConnectionProvider.newConnection())))
                .defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + TOKEN)
                .build();
    }

    private List<String> recorded() throws IOException {
        return Files.readAllLines(record);
    }
}
