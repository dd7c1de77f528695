package dev.tether.agent.stateless;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.modern.McpException;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.McpSchema.CallToolOutcome;
import io.modelcontextprotocol.modern.McpSchema.CallToolRequest;
import io.modelcontextprotocol.modern.McpSchema.CallToolResult;
import io.modelcontextprotocol.modern.server.McpAsyncNotifier;
import io.modelcontextprotocol.modern.server.McpAsyncResponse;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpServer;
import io.modelcontextprotocol.modern.server.feature.McpAsyncTool;
import io.modelcontextprotocol.modern.server.feature.McpAsyncToolRepository;
import io.modelcontextprotocol.modern.server.feature.ToolsPage;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.function.Tuple2;

import dev.tether.calls.ToolCalls;
import dev.tether.calls.ToolNotFoundException;
import dev.tether.catalog.CatalogService;
import dev.tether.catalog.CatalogService.ConnectionTools;
import dev.tether.mcp.ProgressListener;
import dev.tether.mcp.ToolAnswer;
import dev.tether.store.StoredTool;

/**
 * {@code /mcp/tools} on MCP 2026-07-28: every stored tool under its address, called on its connection's warm session
 * as in the handshake era ({@code agent.AgentProtocol}). The list carries {@code ttlMs}, and changes reach
 * {@code subscriptions/listen}. A call whose client sent a {@code progressToken} streams the server's progress before
 * its answer. The tool's server checks the arguments, as in the handshake era: the SDK is handed a schema that
 * takes any object and no output schema, so that both eras pass the same calls through.
 */
final class StatelessTools {

    private static final Map<String, Object> ANY_OBJECT = Map.of("type", "object");
    /** Progress of one call may arrive on two threads at once; one waits out the other. */
    private static final Sinks.EmitFailureHandler TAKE_TURNS = Sinks.EmitFailureHandler.busyLooping(Duration.ofMillis(100));

    private final CatalogService catalogs;
    private final ToolCalls calls;
    private final McpJsonMapper json;
    private final McpServer server;

    StatelessTools(CatalogService catalogs, ToolCalls calls, McpJsonMapper json, StatelessServers servers, String version) {
        this.catalogs = catalogs;
        this.calls = calls;
        this.json = json;
        this.server = servers.server("tether", version, new Tools());
    }

    McpServer server() {
        return server;
    }

    private final class Tools implements McpAsyncToolRepository {

        @Override
        public Mono<ToolsPage> list(McpRequestContext context, @Nullable String cursor) {
            return Flux.defer(() -> catalogs.tools(Optional.empty(), Optional.empty(), Optional.empty()))
                    .flatMapIterable(StatelessTools::tools)
                    .collectSortedList((a, b) -> a.name().compareTo(b.name()))
                    .map(ToolsPage::of);
        }

        @Override
        public Mono<McpAsyncTool> find(McpRequestContext context, String name) {
            return Mono.just(McpAsyncTool.of(McpSchema.Tool.builder(name, ANY_OBJECT).build(), (ctx, request) ->
                    ctx.progressToken() == null ? call(request, null).map(McpAsyncResponse::result)
                            : Mono.just(McpAsyncResponse.<CallToolOutcome>streaming(notifier -> call(request, notifier)))));
        }
    }

    private static List<McpSchema.Tool> tools(ConnectionTools connection) {
        return connection.tools().stream().map(tool -> tool(connection.key().toolAddress(tool.name()), tool)).toList();
    }

    private static McpSchema.Tool tool(String address, StoredTool tool) {
        McpSchema.Tool.Builder built = McpSchema.Tool.builder(address, tool.inputSchema() == null ? ANY_OBJECT : tool.inputSchema())
                .description(tool.description());
        if (tool.outputSchema() != null) {
            built.outputSchema(tool.outputSchema());
        }
        if (tool.requiresApproval()) {
            built.annotations(McpSchema.ToolAnnotations.builder().destructiveHint(true).build());
        }
        return built.build();
    }

    /**
     * A tool's failure (its server crashed, timed out, a cap was reached) is the agent's to read in the result, as MCP
     * has it; only an address that names no tool is a protocol error.
     */
    private Mono<CallToolOutcome> call(CallToolRequest request, @Nullable McpAsyncNotifier progress) {
        Map<String, Object> arguments = request.arguments() == null ? Map.of() : request.arguments();
        Mono<ToolAnswer> call = calls.callAtOwner(request.name(), arguments);
        if (progress != null) {
            call = withProgress(call, progress);
        }
        return call.map(this::modern)
                .onErrorMap(ToolNotFoundException.class, missing -> McpException.invalidParams("Unknown tool: " + missing.getMessage()))
                .onErrorResume(failed -> !(failed instanceof McpException), failed -> Mono.just(CallToolResult.builder()
                        .addContent(McpSchema.TextContent.builder(String.valueOf(failed.getMessage())).build()).isError(true).build()));
    }

    /** The answer as the revision's type, read from its JSON once. */
    private CallToolOutcome modern(ToolAnswer answer) {
        try {
            return json.readValue(answer.json(), CallToolResult.class);
        } catch (IOException unreadable) {
            throw new UncheckedIOException(unreadable);
        }
    }

    /**
     * The server's progress goes out as it comes, and the answer after the last of it: the listener hears progress on
     * the server's threads, a sink hands it to the notifier in order, and the answer waits until the sink is drained.
     */
    private static Mono<ToolAnswer> withProgress(Mono<ToolAnswer> call, McpAsyncNotifier notifier) {
        return Mono.defer(() -> {
            Sinks.Many<ProgressNotification> heard = Sinks.many().unicast().onBackpressureBuffer();
            Mono<Boolean> relayed = heard.asFlux()
                    .concatMap(progress -> notifier.progress(progress.progress(), progress.total(), progress.message()))
                    .then(Mono.just(true));
            Mono<ToolAnswer> answer = call
                    .contextWrite(ProgressListener.of(progress -> heard.emitNext(progress, TAKE_TURNS)))
                    .doFinally(signal -> heard.emitComplete(TAKE_TURNS));
            return Mono.zip(answer, relayed).map(Tuple2::getT1);
        });
    }
}
