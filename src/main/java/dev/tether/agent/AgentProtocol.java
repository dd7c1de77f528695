package dev.tether.agent;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.ErrorCodes;
import io.modelcontextprotocol.spec.McpSchema.Implementation;
import io.modelcontextprotocol.spec.McpSchema.InitializeResult;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCNotification;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCRequest;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCResponse;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCResponse.JSONRPCError;
import io.modelcontextprotocol.spec.McpSchema.ListToolsResult;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import io.modelcontextprotocol.spec.McpSchema.ServerCapabilities;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.modelcontextprotocol.spec.McpSchema.ToolAnnotations;
import io.modelcontextprotocol.spec.ProtocolVersions;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import tools.jackson.databind.util.RawValue;

import dev.tether.daemon.Version;
import dev.tether.calls.ToolCalls;
import dev.tether.calls.ToolNotFoundException;
import dev.tether.catalog.CatalogService;
import dev.tether.catalog.CatalogService.ConnectionTools;
import dev.tether.mcp.ProgressListener;
import dev.tether.store.StoredTool;

/**
 * MCP as Tether's agents speak it, whatever carries the messages (streamable HTTP at {@code /mcp/tools}, or the legacy
 * HTTP+SSE transport): every stored tool under its Executor address
 * ({@code tools.<integration>.<owner>.<connection>.<tool>}), called on the connection's warm session. A call ends
 * with the agent: one whose transport cancels it, or that sends {@code notifications/cancelled} for it, cancels it,
 * and the server behind it hears {@code notifications/cancelled} in turn.
 */
@Component
public final class AgentProtocol {

    static final String LIST_CHANGED = "notifications/tools/list_changed";
    private static final String CANCELLED = "notifications/cancelled";
    private static final String PROGRESS = "notifications/progress";

    /** The MCP versions Tether speaks, newest first: both servers answer the agent's if they know it, else the newest. */
    public static final List<String> PROTOCOL_VERSIONS = List.of(ProtocolVersions.MCP_2025_11_25,
            ProtocolVersions.MCP_2025_06_18, ProtocolVersions.MCP_2025_03_26, ProtocolVersions.MCP_2024_11_05);
    private static final TypeRef<CallToolRequest> CALL = new TypeRef<>() {
    };
    private static final TypeRef<Map<String, Object>> PARAMS = new TypeRef<>() {
    };
    /** Progress of one call and its answer reach the agent from two threads; one waits out the other. */
    private static final Sinks.EmitFailureHandler TAKE_TURNS = Sinks.EmitFailureHandler.busyLooping(Duration.ofMillis(100));

    private final CatalogService catalogs;
    private final ToolCalls calls;
    private final McpJsonMapper json = McpJsonDefaults.getMapper();
    /** Calls in flight by session and request id, so that {@code notifications/cancelled} can reach them. */
    private final Map<String, Sinks.One<Boolean>> inFlight = new ConcurrentHashMap<>();

    AgentProtocol(CatalogService catalogs, ToolCalls calls) {
        this.catalogs = catalogs;
        this.calls = calls;
    }

    /** Reads one JSON-RPC message; fails with a message fit for the agent when {@code body} is none. */
    public JSONRPCMessage read(@Nullable String body) throws UnreadableMessageException {
        try {
            return McpSchema.deserializeJsonRpcMessage(json, body == null ? "" : body);
        } catch (IOException | RuntimeException unreadable) { // Jackson 3 fails unchecked
            throw new UnreadableMessageException("not a JSON-RPC message: " + unreadable.getMessage());
        }
    }

    /**
     * The messages that answer {@code request}: for a {@code tools/call} whose agent asked for progress
     * ({@code params._meta.progressToken}) and whose transport can carry it ({@code relayProgress}), the server's
     * {@code notifications/progress} under the agent's token, then the response. Empty when the agent cancelled
     * the call, for then no answer is owed. Cancelling the Flux cancels the call.
     */
    Flux<JSONRPCMessage> answer(JSONRPCRequest request, String session, boolean relayProgress) {
        return dispatch(request, session, relayProgress)
                // e.g. the store failed: an answer for this request, not the end of a stream that carries others
                .onErrorResume(failed -> Flux.just(JSONRPCResponse.error(request.id(), new JSONRPCError(ErrorCodes.INTERNAL_ERROR,
                        request.method() + " failed: " + failed.getMessage()))));
    }

    private Flux<JSONRPCMessage> dispatch(JSONRPCRequest request, String session, boolean relayProgress) {
        return switch (request.method()) {
            case McpSchema.METHOD_INITIALIZE -> Flux.just(JSONRPCResponse.result(request.id(), initialize(request)));
            case McpSchema.METHOD_PING -> Flux.just(JSONRPCResponse.result(request.id(), Map.of()));
            case McpSchema.METHOD_TOOLS_LIST -> listTools().map(tools -> (JSONRPCMessage) JSONRPCResponse.result(request.id(), tools)).flux();
            case McpSchema.METHOD_TOOLS_CALL -> relayProgress ? progressToken(request)
                    .map(token -> callWithProgress(request, session, token))
                    .orElseGet(() -> callTool(request, session).flux()) : callTool(request, session).flux();
            default -> Flux.just(JSONRPCResponse.error(request.id(), new JSONRPCError(ErrorCodes.METHOD_NOT_FOUND,
                    "Tether's agent endpoint does not serve " + request.method())));
        };
    }

    /** Whether {@code request} is a call that wants progress: the agent gave a {@code progressToken}. */
    boolean wantsProgress(JSONRPCRequest request) {
        return McpSchema.METHOD_TOOLS_CALL.equals(request.method()) && progressToken(request).isPresent();
    }

    /** Takes a notification from the agent; {@code notifications/cancelled} cancels the call it names. */
    void notified(JSONRPCNotification notification, String session) {
        if (!CANCELLED.equals(notification.method())) {
            return;
        }
        Object requestId = params(notification.params(), PARAMS).map(params -> params.get("requestId")).orElse(null);
        Sinks.One<Boolean> cancel = requestId == null ? null : inFlight.get(key(session, requestId));
        if (cancel != null) {
            cancel.tryEmitValue(true);
        }
    }

    /** Cancels whatever {@code session} still has in flight. */
    void end(String session) {
        inFlight.forEach((call, cancel) -> {
            if (call.startsWith(session + "/")) {
                cancel.tryEmitValue(true);
            }
        });
    }

    /** The server's unasked message that the tool list changed. */
    JSONRPCNotification listChanged() {
        return new JSONRPCNotification(McpSchema.JSONRPC_VERSION, LIST_CHANGED, null);
    }

    String write(Object message) {
        try {
            return json.writeValueAsString(message);
        } catch (IOException unwritable) {
            throw new IllegalStateException("cannot write a JSON-RPC message", unwritable);
        }
    }

    /** JSON-RPC's answer to what it cannot read: an error with a null id, which the SDK's response type refuses. */
    String unreadable(UnreadableMessageException why) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        error.put("id", null);
        error.put("error", Map.of("code", ErrorCodes.PARSE_ERROR, "message", why.getMessage()));
        return write(error);
    }

    private InitializeResult initialize(JSONRPCRequest request) {
        Object asked = params(request.params(), PARAMS).map(params -> params.get("protocolVersion")).orElse(null);
        String version = PROTOCOL_VERSIONS.contains(asked) ? (String) asked : PROTOCOL_VERSIONS.get(0);
        return new InitializeResult(version, ServerCapabilities.builder().tools(true).build(),
                new Implementation("tether", Version.TETHER),
                "Tools of every connection Tether knows, named by address: tools.<integration>.<owner>.<connection>.<tool>.");
    }

    private Mono<ListToolsResult> listTools() {
        return Flux.defer(() -> catalogs.tools(Optional.empty(), Optional.empty(), Optional.empty()))
                .flatMapIterable(AgentProtocol::tools)
                .collectSortedList((a, b) -> a.name().compareTo(b.name()))
                .map(tools -> new ListToolsResult(tools, null));
    }

    private static List<Tool> tools(ConnectionTools connection) {
        return connection.tools().stream().map(tool -> tool(connection.key().toolAddress(tool.name()), tool)).toList();
    }

    private static Tool tool(String address, StoredTool tool) {
        ToolAnnotations annotations = tool.requiresApproval() ? new ToolAnnotations(null, null, true, null, null, null) : null;
        return new Tool(address, null, tool.description(), tool.inputSchema(), tool.outputSchema(), annotations, null);
    }

    /**
     * The call's progress and its answer go through one sink, in the order they happen: the server sends its last
     * progress before its answer, and two sources merged could swap them. The call itself runs beside the sink,
     * so that cancelling the whole cancels it.
     */
    private Flux<JSONRPCMessage> callWithProgress(JSONRPCRequest request, String session, Object agentToken) {
        return Flux.defer(() -> {
            Sinks.Many<JSONRPCMessage> messages = Sinks.many().unicast().onBackpressureBuffer();
            ProgressListener relay = progress -> messages.emitNext(progress(agentToken, progress), TAKE_TURNS);
            Mono<Void> call = callTool(request, session)
                    .contextWrite(ProgressListener.of(relay))
                    .doOnSuccess(response -> {
                        if (response != null) {
                            messages.emitNext(response, TAKE_TURNS);
                        }
                        messages.emitComplete(TAKE_TURNS);
                    })
                    .doOnError(error -> messages.emitError(error, TAKE_TURNS))
                    .then();
            return messages.asFlux().mergeWith(call.then(Mono.empty()));
        });
    }

    private static JSONRPCNotification progress(Object agentToken, ProgressNotification progress) {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("progressToken", agentToken);
        params.put("progress", progress.progress());
        if (progress.total() != null) {
            params.put("total", progress.total());
        }
        if (progress.message() != null) {
            params.put("message", progress.message());
        }
        return new JSONRPCNotification(McpSchema.JSONRPC_VERSION, PROGRESS, params);
    }

    private Optional<Object> progressToken(JSONRPCRequest request) {
        return fields(request.params())
                .flatMap(params -> Optional.ofNullable(params.get("_meta")))
                .filter(Map.class::isInstance)
                .<Object>flatMap(meta -> Optional.ofNullable(((Map<?, ?>) meta).get("progressToken")))
                // MCP allows a string or a number, nothing else
                .filter(token -> token instanceof String || token instanceof Number);
    }

    /**
     * A tool's failure (its server crashed, timed out, or a cap was reached) is the agent's to read in the result,
     * as MCP has it; only an address that names no tool is a protocol error.
     */
    private Mono<JSONRPCMessage> callTool(JSONRPCRequest request, String session) {
        CallToolRequest call = callOf(request.params());
        if (call == null) {
            return Mono.just(JSONRPCResponse.error(request.id(), new JSONRPCError(ErrorCodes.INVALID_PARAMS,
                    "tools/call needs params {name, arguments?}, got " + request.params())));
        }
        String key = key(session, request.id());
        return Mono.usingWhen(Mono.fromSupplier(() -> register(key)),
                cancel -> calls.callAtOwner(call.name(), call.arguments() == null ? Map.of() : call.arguments())
                        // the server's result as it wrote it, not read into objects and written again
                        .map(answer -> (JSONRPCMessage) JSONRPCResponse.result(request.id(), new RawValue(answer.json())))
                        .onErrorResume(ToolNotFoundException.class, missing -> Mono.just(JSONRPCResponse.error(request.id(),
                                new JSONRPCError(ErrorCodes.INVALID_PARAMS, "Unknown tool: " + missing.getMessage()))))
                        .onErrorResume(failed -> !(failed instanceof ToolNotFoundException), failed -> Mono.just(
                                JSONRPCResponse.result(request.id(), CallToolResult.builder().addTextContent(failed.getMessage()).isError(true).build())))
                        .takeUntilOther(cancel.asMono()),
                cancel -> Mono.fromRunnable(() -> inFlight.remove(key, cancel)));
    }

    private static String key(String session, Object requestId) {
        return session + "/" + requestId;
    }

    private Sinks.One<Boolean> register(String key) {
        Sinks.One<Boolean> cancel = Sinks.one();
        inFlight.put(key, cancel);
        return cancel;
    }

    /**
     * A {@code tools/call}'s params, {@code {name, arguments?}}; null when they have another shape. Read off the map the
     * message was read into, as a conversion would read them, without writing them into a buffer and reading them again.
     */
    private @Nullable CallToolRequest callOf(@Nullable Object params) {
        Map<?, ?> fields = params instanceof Map<?, ?> map ? map : null;
        if (fields == null) {
            return params(params, CALL).filter(asked -> asked.name() != null).orElse(null);
        }
        Object name = fields.get("name");
        Object arguments = fields.get("arguments");
        if (!(name instanceof String || name instanceof Number || name instanceof Boolean)
                || !(arguments == null || arguments instanceof Map)) {
            return null;
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> values = (Map<String, Object>) arguments;
        return new CallToolRequest(String.valueOf(name), values);
    }

    /** A message's params as a map, as the message was read; empty when there are none or they are no object. */
    private Optional<Map<?, ?>> fields(@Nullable Object params) {
        return params instanceof Map<?, ?> map ? Optional.of(map) : params(params, PARAMS).map(map -> (Map<?, ?>) map);
    }

    /** A message's params as {@code type}; empty when there are none or they have another shape. */
    private <T> Optional<T> params(@Nullable Object params, TypeRef<T> type) {
        if (params == null) {
            return Optional.empty();
        }
        try {
            return Optional.ofNullable(json.convertValue(params, type));
        } catch (RuntimeException otherShape) {
            return Optional.empty();
        }
    }

    /** A body that is no JSON-RPC message; its message says why, for the agent. */
    public static final class UnreadableMessageException extends Exception {

        UnreadableMessageException(String message) {
            super(message);
        }
    }
}
