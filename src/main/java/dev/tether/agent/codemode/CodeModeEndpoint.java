package dev.tether.agent.codemode;

import java.util.Map;
import java.util.Objects;

import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCNotification;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCRequest;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.agent.AgentEndpoint;
import dev.tether.agent.AgentEvents;
import dev.tether.agent.AgentProtocol;
import dev.tether.agent.AgentProtocol.UnreadableMessageException;
import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.replicas.ReplicaIds;

/**
 * Executor's {@code /mcp}: MCP's streamable HTTP transport as the TypeScript SDK serves it for Executor (sessions,
 * JSON answers, {@code GET} for what the server sends unasked), over {@link CodeModeProtocol}. A session starts at
 * {@code initialize}, which hands out its id, and takes {@code ?elicitation_mode=model|browser|native} then; any
 * other message needs that id, and an id Tether does not know is a 404, after which MCP clients start anew. The
 * transport's refusals are the SDK's, word for word.
 */
@RestController
final class CodeModeEndpoint {

    private static final String SESSION_HEADER = AgentEndpoint.SESSION_HEADER;

    private final CodeModeProtocol protocol;
    private final CodeModeSessions sessions;
    private final AgentProtocol messages;
    private final AgentEvents events;
    private final ReplicaIds names;

    CodeModeEndpoint(CodeModeProtocol protocol, CodeModeSessions sessions, AgentProtocol messages, AgentEvents events,
            ReplicaIds names) {
        this.names = names;
        this.protocol = protocol;
        this.sessions = sessions;
        this.messages = messages;
        this.events = events;
    }

    @PostMapping("/mcp")
    Mono<ResponseEntity<String>> receive(@RequestBody(required = false) @Nullable String body,
            @RequestHeader(name = SESSION_HEADER, required = false) @Nullable String sessionId,
            @RequestHeader(name = HttpHeaders.ACCEPT, required = false) @Nullable String accept,
            @RequestHeader(name = HttpHeaders.CONTENT_TYPE, required = false) @Nullable String contentType,
            @RequestParam(name = "elicitation_mode", required = false) @Nullable String mode,
            ServerWebExchange exchange) {
        ServerHttpRequest http = exchange.getRequest();
        String subject = subject(exchange);
        if (accept == null || !accept.contains("application/json") || !accept.contains("text/event-stream")) {
            return refuse(HttpStatus.NOT_ACCEPTABLE, -32000, "Not Acceptable: Client must accept both application/json and text/event-stream");
        }
        if (contentType == null || !contentType.contains("application/json")) {
            return refuse(HttpStatus.UNSUPPORTED_MEDIA_TYPE, -32000, "Unsupported Media Type: Content-Type must be application/json");
        }
        JSONRPCMessage message;
        try {
            message = messages.read(body);
        } catch (UnreadableMessageException unreadable) {
            return refuse(HttpStatus.BAD_REQUEST, McpSchema.ErrorCodes.PARSE_ERROR,
                    CodeModeJson.json(body) ? "Parse error: Invalid JSON-RPC message" : "Parse error: Invalid JSON");
        }
        boolean initialize = message instanceof JSONRPCRequest request && McpSchema.METHOD_INITIALIZE.equals(request.method());
        if (initialize && sessionId == null) {
            return start((JSONRPCRequest) message, ElicitationMode.of(mode), http, subject);
        }
        if (sessionId == null) {
            return refuse(HttpStatus.BAD_REQUEST, -32000, "Bad Request: Server not initialized");
        }
        CodeModeSession session = sessions.find(sessionId, subject).orElse(null);
        if (session == null) {
            return refuse(HttpStatus.NOT_FOUND, -32001, "Session not found");
        }
        if (initialize) {
            return refuse(HttpStatus.BAD_REQUEST, McpSchema.ErrorCodes.INVALID_REQUEST, "Invalid Request: Server already initialized");
        }
        if (message instanceof JSONRPCNotification notification) {
            if ("notifications/cancelled".equals(notification.method()) && notification.params() instanceof Map<?, ?> params) {
                session.cancel(params.get("requestId"));
            }
            return Mono.just(ResponseEntity.accepted().build());
        }
        if (message instanceof JSONRPCResponse response) {
            protocol.answered(session, response);
            return Mono.just(ResponseEntity.accepted().build());
        }
        return protocol.answer(session, (JSONRPCRequest) message)
                .map(answer -> json(HttpStatus.OK, answer, sessionId))
                // cancelled by the agent: no answer is owed
                .defaultIfEmpty(ResponseEntity.accepted().build());
    }

    private Mono<ResponseEntity<String>> start(JSONRPCRequest request, ElicitationMode mode, ServerHttpRequest http, String subject) {
        Map<?, ?> params = request.params() instanceof Map<?, ?> given ? given : Map.of();
        Map<?, ?> capabilities = params.get("capabilities") instanceof Map<?, ?> declared ? declared : Map.of();
        Object elicitation = capabilities.get("elicitation");
        // An empty elicitation capability is form mode, as MCP had it before URL mode existed (and the SDK reads it).
        boolean form = elicitation instanceof Map<?, ?> modes && (modes.isEmpty() || modes.containsKey("form"));
        boolean url = elicitation instanceof Map<?, ?> modes && modes.containsKey("url");
        Object asked = params.get("protocolVersion");
        String version = CodeModeProtocol.versions().contains(asked) ? (String) Objects.requireNonNull(asked)
                : CodeModeProtocol.versions().get(0);
        CodeModeSession session = new CodeModeSession(names.session(), mode, form, url, http.getURI());
        return sessions.add(session, subject).then(Mono.fromSupplier(() -> json(HttpStatus.OK, protocol.initialize(request, version), session.id())));
    }

    /** The session's stream of requests Tether sends its client (questions, in native mode); one at a time. */
    @GetMapping("/mcp")
    ResponseEntity<?> stream(@RequestHeader(name = SESSION_HEADER, required = false) @Nullable String sessionId,
            @RequestHeader(name = HttpHeaders.ACCEPT, required = false) @Nullable String accept, ServerWebExchange exchange) {
        if (accept == null || !accept.contains("text/event-stream")) {
            return jsonError(HttpStatus.NOT_ACCEPTABLE, -32000, "Not Acceptable: Client must accept text/event-stream");
        }
        if (sessionId == null) {
            return jsonError(HttpStatus.BAD_REQUEST, -32000, "Bad Request: Mcp-Session-Id header is required");
        }
        CodeModeSession session = sessions.find(sessionId, subject(exchange)).orElse(null);
        if (session == null) {
            return jsonError(HttpStatus.NOT_FOUND, -32001, "Session not found");
        }
        if (!session.openStream()) {
            return jsonError(HttpStatus.CONFLICT, -32000, "Conflict: Only one SSE stream is allowed per session");
        }
        Flux<ServerSentEvent<String>> sent = session.outbox().asFlux()
                .map(text -> ServerSentEvent.<String>builder().event("message").data(text).build())
                .doFinally(signal -> session.closeStream());
        return AgentEvents.stream().header(SESSION_HEADER, sessionId).body(events.keptAlive(sent));
    }

    @DeleteMapping("/mcp")
    Mono<ResponseEntity<String>> end(@RequestHeader(name = SESSION_HEADER, required = false) @Nullable String sessionId,
            ServerWebExchange exchange) {
        if (sessionId == null) {
            return refuse(HttpStatus.BAD_REQUEST, -32000, "Bad Request: Mcp-Session-Id header is required");
        }
        return sessions.end(sessionId, subject(exchange)).map(ended -> ended ? ResponseEntity.ok().<String>build()
                : jsonError(HttpStatus.NOT_FOUND, -32001, "Session not found"));
    }

    /** Whose the session is: the caller's, as the authentication found it. */
    private static String subject(ServerWebExchange exchange) {
        return exchange.getAttributeOrDefault(Principals.ATTRIBUTE, Principal.DAEMON).subject();
    }

    private Mono<ResponseEntity<String>> refuse(HttpStatus status, int code, String message) {
        return Mono.just(jsonError(status, code, message));
    }

    private ResponseEntity<String> jsonError(HttpStatus status, int code, String message) {
        return json(status, CodeModeJson.error(null, code, message), null);
    }

    private static ResponseEntity<String> json(HttpStatus status, String body, @Nullable String sessionId) {
        ResponseEntity.BodyBuilder response = ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON);
        if (sessionId != null) {
            response.header(SESSION_HEADER, sessionId);
        }
        return response.body(body);
    }
}
