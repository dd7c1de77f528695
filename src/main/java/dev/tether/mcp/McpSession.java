package dev.tether.mcp;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeoutException;

import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.InitializeResult;
import io.modelcontextprotocol.spec.McpSchema.ListToolsResult;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import reactor.core.publisher.Mono;

/**
 * An initialized MCP conversation with one server. Every operation is bounded, and fails at once when the
 * server exits or breaks the protocol instead of waiting for its timeout. A session lives only inside
 * {@link McpSessions#withSession}; it is not to be kept.
 */
public final class McpSession {

    private final String server;
    private final McpAsyncClient client;
    private final ChildProcessTransport transport;
    private final McpProperties properties;

    McpSession(String server, McpAsyncClient client, ChildProcessTransport transport, McpProperties properties) {
        this.server = server;
        this.client = client;
        this.transport = transport;
        this.properties = properties;
    }

    public String server() {
        return server;
    }

    Mono<InitializeResult> initialize() {
        return bounded(client.initialize(), "initialize", properties.discoveryTimeout());
    }

    /** Answers when the server answered a ping: MCP's liveness check. */
    public Mono<Void> ping() {
        return bounded(client.ping(), "ping", properties.pingTimeout()).then();
    }

    /**
     * Lists every tool, following {@code nextCursor} for at most {@code maxToolPages} pages. A page that fails
     * after the first ends the listing with what arrived, marked incomplete; a failing first page fails.
     */
    public Mono<ToolCatalog> listTools() {
        return bounded(client.listTools(null), "discovery", properties.discoveryTimeout())
                .flatMap(first -> collect(first, new ArrayList<>(), 1));
    }

    public Mono<CallToolResult> callTool(String tool, Map<String, Object> arguments) {
        return bounded(client.callTool(new CallToolRequest(tool, arguments)), "tools/call " + tool, properties.callTimeout());
    }

    void close() {
        client.close();
    }

    private Mono<ToolCatalog> collect(ListToolsResult page, List<Tool> tools, int pages) {
        tools.addAll(page.tools());
        String cursor = page.nextCursor();
        if (cursor == null || cursor.isEmpty()) {
            return Mono.just(new ToolCatalog(tools, Optional.empty()));
        }
        if (pages >= properties.maxToolPages()) {
            return Mono.just(new ToolCatalog(tools, Optional.of("stopped after " + pages + " pages of tools/list")));
        }
        return bounded(client.listTools(cursor), "discovery", properties.discoveryTimeout())
                .flatMap(next -> collect(next, tools, pages + 1))
                .onErrorResume(error -> !(error instanceof McpServerException) || error instanceof McpTimeoutException,
                        error -> Mono.just(new ToolCatalog(tools,
                                Optional.of("tools/list page " + (pages + 1) + " failed: " + error.getMessage()))));
    }

    private <T> Mono<T> bounded(Mono<T> operation, String name, Duration timeout) {
        return operation
                .or(transport.failure())
                .timeout(timeout)
                .onErrorMap(TimeoutException.class, ex -> new McpTimeoutException(server, name, timeout));
    }
}
