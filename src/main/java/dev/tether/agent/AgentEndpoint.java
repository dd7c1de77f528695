package dev.tether.agent;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCNotification;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCRequest;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.lang.Contract;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.tether.agent.AgentProtocol.UnreadableMessageException;
import dev.tether.catalog.CatalogService;
import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.replicas.ReplicaIds;

/**
 * MCP's streamable HTTP transport at {@code /mcp/tools}: every stored tool by its address ({@link AgentProtocol} says
 * what is spoken), for agents that want plain tools; Executor's code mode is {@code /mcp} ({@code agent.codemode}).
 * A POST is answered with one JSON message, or, for a call whose agent asked for progress and accepts {@code text/event-stream}, with
 * a stream of the call's progress and then its answer. {@code GET /mcp/tools} opens the session's stream of unasked
 * messages: {@code notifications/tools/list_changed} whenever the tools on offer may have changed. A stream ends
 * when its agent leaves or ends the session with {@code DELETE /mcp/tools}; a call ends with its stream or request.
 *
 * <p>Sessions are not kept: an id is handed out at {@code initialize} and any id is taken as the agent's, so a
 * restarted daemon serves its agents on without a new handshake. An id only groups a session's calls, for
 * {@code notifications/cancelled} and {@code DELETE}, and names its one {@code GET} stream.
 */
@RestController
public final class AgentEndpoint {

    /** MCP's streamable HTTP session header, as the SDK names it. */
    public static final String SESSION_HEADER = io.modelcontextprotocol.spec.HttpHeaders.MCP_SESSION_ID;

    private final AgentProtocol protocol;
    private final AgentEvents events;
    private final CatalogService catalogs;
    private final ReplicaIds names;
    /** The open {@code GET /mcp} stream of each session, ended by {@code DELETE /mcp}. */
    private final Map<String, Sinks.Empty<Void>> streams = new ConcurrentHashMap<>();

    AgentEndpoint(AgentProtocol protocol, AgentEvents events, CatalogService catalogs, ReplicaIds names) {
        this.names = names;
        this.protocol = protocol;
        this.events = events;
        this.catalogs = catalogs;
    }

    @PostMapping("/mcp/tools")
    Mono<ResponseEntity<?>> receive(@RequestBody(required = false) String body,
            @RequestHeader(name = SESSION_HEADER, required = false) String session,
            @RequestHeader(name = HttpHeaders.ACCEPT, required = false) String accept, ServerWebExchange exchange) {
        JSONRPCMessage message;
        try {
            message = protocol.read(body);
        } catch (UnreadableMessageException unreadable) {
            return Mono.just(ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(protocol.unreadable(unreadable)));
        }
        if (message instanceof JSONRPCNotification notification) {
            protocol.notified(notification, scoped(exchange, session));
            return Mono.just(ResponseEntity.accepted().build());
        }
        if (!(message instanceof JSONRPCRequest request)) {
            return Mono.just(ResponseEntity.accepted().build()); // a response: Tether never asks the agent anything
        }
        String answeredSession = McpSchema.METHOD_INITIALIZE.equals(request.method()) && session == null
                ? names.session() : session;
        if (protocol.wantsProgress(request) && acceptsEvents(accept)) {
            Flux<ServerSentEvent<String>> stream = events.keptAlive(protocol.answer(request, scoped(exchange, session), true)
                    .map(events::message));
            return Mono.just(withSession(AgentEvents.stream(), answeredSession).body(stream));
        }
        return protocol.answer(request, scoped(exchange, session), false)
                .ofType(JSONRPCResponse.class)
                .next()
                .<ResponseEntity<?>>map(response -> withSession(ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON),
                        answeredSession).body(protocol.write(response)))
                // cancelled by the agent: no answer is owed
                .defaultIfEmpty(ResponseEntity.accepted().build());
    }

    /**
     * The session's stream of unasked messages. One per session, as MCP has it (a message goes out on one stream
     * only): a new one ends the one before, which its agent may have left without the server noticing yet.
     */
    @GetMapping("/mcp/tools")
    ResponseEntity<?> stream(@RequestHeader(name = SESSION_HEADER, required = false) String session,
            @RequestHeader(name = HttpHeaders.ACCEPT, required = false) String accept, ServerWebExchange exchange) {
        if (!acceptsEvents(accept)) {
            return ResponseEntity.status(HttpStatus.NOT_ACCEPTABLE).contentType(MediaType.TEXT_PLAIN)
                    .body("GET /mcp answers with text/event-stream only; say so in Accept");
        }
        if (session == null || session.isBlank()) {
            return ResponseEntity.badRequest().contentType(MediaType.TEXT_PLAIN)
                    .body("GET /mcp needs the " + SESSION_HEADER + " header that initialize handed out");
        }
        Flux<ServerSentEvent<String>> changes = Flux.defer(() -> {
            Sinks.Empty<Void> ended = Sinks.empty();
            Sinks.Empty<Void> before = streams.put(scoped(exchange, session), ended);
            if (before != null) {
                before.tryEmitEmpty();
            }
            return catalogs.changes()
                    .map(integration -> events.message(protocol.listChanged()))
                    // a hint, not a record: an agent that reads slowly needs the latest one only
                    .onBackpressureLatest()
                    .takeUntilOther(ended.asMono())
                    .doFinally(signal -> streams.remove(scoped(exchange, session), ended));
        });
        return withSession(AgentEvents.stream(), session).body(events.keptAlive(changes));
    }

    /** Ending a session ends its stream and cancels what it still has in flight. */
    @DeleteMapping("/mcp/tools")
    ResponseEntity<Void> end(@RequestHeader(name = SESSION_HEADER, required = false) String session, ServerWebExchange exchange) {
        if (session != null) {
            Sinks.Empty<Void> stream = streams.remove(scoped(exchange, session));
            if (stream != null) {
                stream.tryEmitEmpty();
            }
            protocol.end(scoped(exchange, session));
        }
        return ResponseEntity.ok().build();
    }

    /**
     * A session id as its caller's: another user naming the same id names another session, so it can neither cancel
     * this one's calls nor end its stream. A line break keeps subject and id apart; null stays null (no session).
     */
    @Contract("_, !null -> !null")
    static @Nullable String scoped(ServerWebExchange exchange, @Nullable String session) {
        return session == null ? null : exchange.getAttributeOrDefault(Principals.ATTRIBUTE, Principal.DAEMON).subject() + "\n" + session;
    }

    private static ResponseEntity.BodyBuilder withSession(ResponseEntity.BodyBuilder response, String session) {
        return session == null ? response : response.header(SESSION_HEADER, session);
    }

    /** Only an agent that names {@code text/event-stream} gets a stream; {@code *}/{@code *} is no promise to read one. */
    public static boolean acceptsEvents(String accept) {
        if (accept == null) {
            return false;
        }
        try {
            List<MediaType> types = MediaType.parseMediaTypes(accept);
            return types.stream().anyMatch(type -> type.getType().equalsIgnoreCase("text")
                    && type.getSubtype().equalsIgnoreCase("event-stream") && type.getQualityValue() > 0);
        } catch (InvalidMediaTypeException unreadable) {
            return false;
        }
    }
}
