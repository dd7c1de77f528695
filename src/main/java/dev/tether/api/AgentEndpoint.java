package dev.tether.api;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
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
import io.modelcontextprotocol.spec.McpSchema.ServerCapabilities;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.modelcontextprotocol.spec.McpSchema.ToolAnnotations;
import io.modelcontextprotocol.spec.ProtocolVersions;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.tether.TetherApplication;
import dev.tether.calls.ToolCalls;
import dev.tether.calls.ToolNotFoundException;
import dev.tether.catalog.CatalogService;
import dev.tether.catalog.CatalogService.ConnectionTools;
import dev.tether.store.StoredTool;

/**
 * The agent endpoint: MCP over streamable HTTP at {@code /mcp}, where an agent finds every stored tool under its
 * Executor address ({@code tools.<integration>.<owner>.<connection>.<tool>}) and calls it on the connection's warm
 * session. Each POST is answered with one JSON message; the server never opens a stream of its own. A call ends
 * with the agent: one that disconnects, or that sends {@code notifications/cancelled} for the call, cancels it,
 * and the server behind it hears {@code notifications/cancelled} in turn.
 */
@RestController
final class AgentEndpoint {

    static final String SESSION_HEADER = "Mcp-Session-Id";
    private static final String CANCELLED = "notifications/cancelled";

    private static final List<String> PROTOCOL_VERSIONS = List.of(ProtocolVersions.MCP_2025_11_25,
            ProtocolVersions.MCP_2025_06_18, ProtocolVersions.MCP_2025_03_26, ProtocolVersions.MCP_2024_11_05);
    private static final TypeRef<CallToolRequest> CALL = new TypeRef<>() {
    };
    private static final TypeRef<Map<String, Object>> PARAMS = new TypeRef<>() {
    };

    private final CatalogService catalogs;
    private final ToolCalls calls;
    private final McpJsonMapper json = McpJsonDefaults.getMapper();
    /** Calls in flight by session and request id, so that {@code notifications/cancelled} can reach them. */
    private final Map<String, Sinks.One<Boolean>> inFlight = new ConcurrentHashMap<>();

    AgentEndpoint(CatalogService catalogs, ToolCalls calls) {
        this.catalogs = catalogs;
        this.calls = calls;
    }

    @PostMapping("/mcp")
    Mono<ResponseEntity<String>> receive(@RequestBody(required = false) String body,
            @RequestHeader(name = SESSION_HEADER, required = false) String session) {
        JSONRPCMessage message;
        try {
            message = McpSchema.deserializeJsonRpcMessage(json, body == null ? "" : body);
        } catch (IOException | RuntimeException unreadable) { // Jackson 3 fails unchecked
            return Mono.just(unreadable("not a JSON-RPC message: " + unreadable.getMessage()));
        }
        if (message instanceof JSONRPCNotification notification) {
            cancelIfAsked(notification, session);
            return Mono.just(ResponseEntity.accepted().build());
        }
        if (!(message instanceof JSONRPCRequest request)) {
            return Mono.just(ResponseEntity.accepted().build()); // a response: Tether never asks the agent anything
        }
        return respond(request, session);
    }

    /** No stream of server-initiated messages: Tether has nothing to say unasked. */
    @GetMapping("/mcp")
    ResponseEntity<Void> stream() {
        return ResponseEntity.status(HttpStatus.METHOD_NOT_ALLOWED).header(HttpHeaders.ALLOW, "POST, DELETE").build();
    }

    /** Ending a session cancels what it still has in flight. */
    @DeleteMapping("/mcp")
    ResponseEntity<Void> end(@RequestHeader(name = SESSION_HEADER, required = false) String session) {
        if (session != null) {
            inFlight.forEach((call, cancel) -> {
                if (call.startsWith(session + "/")) {
                    cancel.tryEmitValue(true);
                }
            });
        }
        return ResponseEntity.ok().build();
    }

    private Mono<ResponseEntity<String>> respond(JSONRPCRequest request, String session) {
        return switch (request.method()) {
            case McpSchema.METHOD_INITIALIZE -> Mono.just(answer(JSONRPCResponse.result(request.id(), initialize(request)),
                    session != null ? session : UUID.randomUUID().toString()));
            case McpSchema.METHOD_PING -> Mono.just(answer(JSONRPCResponse.result(request.id(), Map.of()), session));
            case McpSchema.METHOD_TOOLS_LIST -> listTools()
                    .map(tools -> answer(JSONRPCResponse.result(request.id(), tools), session));
            case McpSchema.METHOD_TOOLS_CALL -> callTool(request, session)
                    .map(response -> answer(response, session))
                    // cancelled by the agent: no answer is owed
                    .defaultIfEmpty(ResponseEntity.accepted().build());
            default -> Mono.just(answer(JSONRPCResponse.error(request.id(), new JSONRPCError(ErrorCodes.METHOD_NOT_FOUND,
                    "Tether's agent endpoint does not serve " + request.method())), session));
        };
    }

    private InitializeResult initialize(JSONRPCRequest request) {
        Object asked = params(request.params(), PARAMS).map(params -> params.get("protocolVersion")).orElse(null);
        String version = PROTOCOL_VERSIONS.contains(asked) ? (String) asked : PROTOCOL_VERSIONS.get(0);
        return new InitializeResult(version, ServerCapabilities.builder().tools(false).build(),
                new Implementation("tether", TetherApplication.VERSION),
                "Tools of every connection Tether knows, named by address: tools.<integration>.<owner>.<connection>.<tool>.");
    }

    private Mono<ListToolsResult> listTools() {
        return Flux.defer(() -> catalogs.tools(Optional.empty(), Optional.empty(), Optional.empty()))
                .flatMapIterable(AgentEndpoint::tools)
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
     * A tool's failure (its server crashed, timed out, or a cap was reached) is the agent's to read in the result,
     * as MCP has it; only an address that names no tool is a protocol error.
     */
    private Mono<JSONRPCResponse> callTool(JSONRPCRequest request, String session) {
        CallToolRequest call = params(request.params(), CALL).filter(asked -> asked.name() != null).orElse(null);
        if (call == null) {
            return Mono.just(JSONRPCResponse.error(request.id(), new JSONRPCError(ErrorCodes.INVALID_PARAMS,
                    "tools/call needs params {name, arguments?}, got " + request.params())));
        }
        String key = session + "/" + request.id();
        return Mono.usingWhen(Mono.fromSupplier(() -> register(key)),
                cancel -> calls.call(call.name(), call.arguments() == null ? Map.of() : call.arguments())
                        .map(result -> JSONRPCResponse.result(request.id(), result))
                        .onErrorResume(ToolNotFoundException.class, missing -> Mono.just(JSONRPCResponse.error(request.id(),
                                new JSONRPCError(ErrorCodes.INVALID_PARAMS, "Unknown tool: " + missing.getMessage()))))
                        .onErrorResume(failed -> !(failed instanceof ToolNotFoundException), failed -> Mono.just(
                                JSONRPCResponse.result(request.id(), CallToolResult.builder().addTextContent(failed.getMessage()).isError(true).build())))
                        .takeUntilOther(cancel.asMono()),
                cancel -> Mono.fromRunnable(() -> inFlight.remove(key, cancel)));
    }

    private Sinks.One<Boolean> register(String key) {
        Sinks.One<Boolean> cancel = Sinks.one();
        inFlight.put(key, cancel);
        return cancel;
    }

    private void cancelIfAsked(JSONRPCNotification notification, String session) {
        if (!CANCELLED.equals(notification.method())) {
            return;
        }
        Object requestId = params(notification.params(), PARAMS).map(params -> params.get("requestId")).orElse(null);
        Sinks.One<Boolean> cancel = requestId == null ? null : inFlight.get(session + "/" + requestId);
        if (cancel != null) {
            cancel.tryEmitValue(true);
        }
    }

    /** A message's params as {@code type}; empty when there are none or they have another shape. */
    private <T> Optional<T> params(Object params, TypeRef<T> type) {
        if (params == null) {
            return Optional.empty();
        }
        try {
            return Optional.ofNullable(json.convertValue(params, type));
        } catch (RuntimeException otherShape) {
            return Optional.empty();
        }
    }

    /** JSON-RPC's answer to what it cannot read: an error with a null id, which the SDK's response type refuses. */
    private ResponseEntity<String> unreadable(String why) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        error.put("id", null);
        error.put("error", Map.of("code", ErrorCodes.PARSE_ERROR, "message", why));
        return written(error, ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON));
    }

    private ResponseEntity<String> answer(JSONRPCResponse response, String session) {
        ResponseEntity.BodyBuilder ok = ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON);
        if (session != null) {
            ok.header(SESSION_HEADER, session);
        }
        return written(response, ok);
    }

    private ResponseEntity<String> written(Object message, ResponseEntity.BodyBuilder response) {
        try {
            return response.body(json.writeValueAsString(message));
        } catch (IOException unwritable) {
            throw new IllegalStateException("cannot write a JSON-RPC response", unwritable);
        }
    }
}
