package dev.tether.agent.stateless;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.modern.JsonRpc;
import io.modelcontextprotocol.modern.JsonRpc.JSONRPCMessage;
import io.modelcontextprotocol.modern.JsonRpc.JSONRPCNotification;
import io.modelcontextprotocol.modern.JsonRpc.JSONRPCRequest;
import io.modelcontextprotocol.modern.JsonRpc.JSONRPCResponse;
import io.modelcontextprotocol.modern.JsonRpc.JSONRPCResponse.JSONRPCError;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.McpHeaders;
import io.modelcontextprotocol.modern.server.McpRequestManager;
import io.modelcontextprotocol.modern.server.McpTransportResponse;
import io.modelcontextprotocol.modern.server.transport.McpHeaderDecoder;
import io.modelcontextprotocol.server.transport.HeaderAccessor;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.agent.AgentEvents;

/**
 * MCP 2026-07-28's streamable HTTP as a WebFlux handler in front of an SDK server ({@link McpRequestManager}): the
 * SDK's servlet transport ({@code HttpServletMcpTransport}) does the same on a servlet container, blocking. One POST
 * is one JSON-RPC message; a request is answered with one JSON response, or with an event stream when the server
 * streams (progress, {@code subscriptions/listen}); a notification with 202. The routing headers must agree with the
 * body ({@code Mcp-Method}, {@code MCP-Protocol-Version}, {@code Mcp-Name}), as the specification has every server
 * check them, and a refusal carries the HTTP status the SDK gives it. Who asks is part of what the server sees
 * ({@link #PRINCIPAL}): a {@code requestState} opens only for the credential that it was sealed for.
 */
final class StatelessTransport {

    /** The transport context's key for who asks: a digest of the request's credential, never the credential. */
    static final String PRINCIPAL = "tether.principal";

    static final String METHOD_HEADER = "Mcp-Method";
    static final String NAME_HEADER = "Mcp-Name";
    static final String VERSION_HEADER = "MCP-Protocol-Version";
    private static final String VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
    /** The SDK's servlet transport's statuses for its refusals; any other error goes out as 200. */
    private static final Map<Integer, HttpStatus> STATUSES = Map.of(-32700, HttpStatus.BAD_REQUEST, -32600, HttpStatus.BAD_REQUEST,
            -32602, HttpStatus.BAD_REQUEST, -32020, HttpStatus.BAD_REQUEST, -32021, HttpStatus.BAD_REQUEST,
            -32022, HttpStatus.BAD_REQUEST, -32601, HttpStatus.NOT_FOUND);

    private final McpJsonMapper json;
    private final AgentEvents events;

    StatelessTransport(McpJsonMapper json, AgentEvents events) {
        this.json = json;
        this.events = events;
    }

    /** Whether {@code request} is of the stateless era: no client of the handshake era sends these headers. */
    static boolean stateless(ServerRequest request) {
        HttpHeaders headers = request.headers().asHttpHeaders();
        return headers.containsHeader(METHOD_HEADER) || McpSchema.LATEST_PROTOCOL_VERSION.equals(headers.getFirst(VERSION_HEADER));
    }

    Mono<ServerResponse> serve(ServerRequest request, McpRequestManager server) {
        MediaType type = request.headers().contentType().orElse(null);
        if (type == null || !MediaType.APPLICATION_JSON.isCompatibleWith(type)) {
            return ServerResponse.status(HttpStatus.UNSUPPORTED_MEDIA_TYPE).contentType(MediaType.TEXT_PLAIN)
                    .bodyValue("Unsupported Media Type: Content-Type must be application/json");
        }
        return request.bodyToMono(String.class).defaultIfEmpty("").flatMap(body -> {
            JSONRPCMessage message;
            try {
                message = JsonRpc.deserializeMessage(json, body);
            } catch (JsonRpc.InvalidMessageException invalid) {
                return error(JSONRPCResponse.error(invalid.id(), new JSONRPCError(-32600, "Invalid JSON-RPC message")));
            } catch (IOException | RuntimeException unreadable) {
                return error(JSONRPCResponse.error(null, new JSONRPCError(-32700, "Parse error")));
            }
            McpTransportContext context = context(request);
            if (message instanceof JSONRPCNotification notification) {
                return server.handleNotification(context, notification).then(ServerResponse.accepted().build());
            }
            if (!(message instanceof JSONRPCRequest call)) {
                return error(JSONRPCResponse.error(null, new JSONRPCError(-32600, "The server accepts either requests or notifications")));
            }
            String mismatch = headerMismatch(request.headers().asHttpHeaders(), call);
            if (mismatch != null) {
                return error(JSONRPCResponse.error(call.id(), new JSONRPCError(-32020, mismatch)));
            }
            return server.handle(context, call).flatMap(this::answer);
        });
    }

    private Mono<ServerResponse> answer(McpTransportResponse response) {
        if (response instanceof McpTransportResponse.Result result) {
            return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(write(result.response()));
        }
        if (response instanceof McpTransportResponse.Error failed) {
            return error(failed.response());
        }
        Flux<ServerSentEvent<String>> stream = ((McpTransportResponse.Streaming) response).messages()
                .map(message -> ServerSentEvent.<String>builder().event("message").data(write(message)).build());
        // no-store and no buffering: a proxy that holds events back would hold progress and list changes back
        return ServerResponse.ok().contentType(MediaType.TEXT_EVENT_STREAM).header(HttpHeaders.CACHE_CONTROL, "no-store")
                .header("X-Accel-Buffering", "no").body(BodyInserters.fromServerSentEvents(events.keptAlive(stream)));
    }

    private Mono<ServerResponse> error(JSONRPCResponse response) {
        HttpStatus status = response.error() == null ? HttpStatus.OK : STATUSES.getOrDefault(response.error().code(), HttpStatus.OK);
        return ServerResponse.status(status).contentType(MediaType.APPLICATION_JSON).bodyValue(write(response));
    }

    private String write(Object message) {
        try {
            return json.writeValueAsString(message);
        } catch (IOException unwritable) {
            throw new IllegalStateException("cannot write a JSON-RPC message", unwritable);
        }
    }

    /**
     * The routing headers of a stateless request against its body, as the specification has servers check them
     * (the SDK's servlet transport words its refusals so): one {@code Mcp-Method} equal to the method, one
     * {@code MCP-Protocol-Version} equal to the body's, one {@code Mcp-Name} equal to the tool's name.
     */
    private static @Nullable String headerMismatch(HttpHeaders headers, JSONRPCRequest request) {
        Map<?, ?> params = request.params() instanceof Map<?, ?> given ? given : Map.of();
        String version = params.get("_meta") instanceof Map<?, ?> meta && meta.get(VERSION_KEY) instanceof String v ? v : null;
        if (McpSchema.METHOD_INITIALIZE.equals(request.method()) && version == null) {
            return null;
        }
        String wrong = single(headers, METHOD_HEADER, request.method());
        if (wrong != null) {
            return wrong;
        }
        if (version != null && (wrong = single(headers, VERSION_HEADER, version)) != null) {
            return wrong.replace("request method", "_meta protocol version");
        }
        if (!McpSchema.METHOD_TOOLS_CALL.equals(request.method()) || !(params.get("name") instanceof String name)) {
            return null;
        }
        List<String> names = headers.getOrEmpty(NAME_HEADER);
        if (names.size() != 1) {
            return names.isEmpty() ? "Missing required header: " + NAME_HEADER : NAME_HEADER + " header has more than one value";
        }
        String decoded = McpHeaderDecoder.decodeValue(names.get(0));
        if (decoded == null) {
            return NAME_HEADER + " header has a malformed value";
        }
        return name.equals(decoded) ? null : NAME_HEADER + " header does not match request name/uri";
    }

    private static @Nullable String single(HttpHeaders headers, String header, String expected) {
        List<String> values = headers.getOrEmpty(header);
        if (values.isEmpty()) {
            return "Missing required header: " + header;
        }
        if (values.size() > 1) {
            return header + " header has more than one value";
        }
        return values.get(0).equals(expected) ? null : header + " header does not match request method";
    }

    private static McpTransportContext context(ServerRequest request) {
        HttpHeaders headers = request.headers().asHttpHeaders();
        McpHeaders mcpHeaders = McpHeaderDecoder.headers(new HeaderAccessor() {
            @Override
            public List<String> getHeader(String name) {
                return headers.getOrEmpty(name);
            }

            @Override
            public List<String> getHeaderNames() {
                return List.copyOf(headers.headerNames());
            }
        });
        return McpTransportContext.create(Map.of(McpHeaders.TRANSPORT_CONTEXT_KEY, mcpHeaders,
                PRINCIPAL, principal(headers.getFirst(HttpHeaders.AUTHORIZATION))));
    }

    /**
     * Who asks, as far as a {@code requestState} is concerned: the SHA-256 of the credential the request came with (the
     * security filter has accepted it already). A retry under another credential cannot open the state.
     */
    static String principal(@Nullable String authorization) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest((authorization == null ? "" : authorization).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", impossible);
        }
    }
}
