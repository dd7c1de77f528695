package dev.tether.agent;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCNotification;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCRequest;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.util.concurrent.Queues;

import dev.tether.agent.AgentProtocol.UnreadableMessageException;
import dev.tether.catalog.CatalogService;
import dev.tether.replicas.ReplicaIds;

/**
 * MCP's HTTP+SSE transport of protocol 2024-11-05, for agents that predate streamable HTTP: {@code GET /sse}
 * opens the session's stream, whose first event ({@code endpoint}) names where to post
 * ({@code /messages?sessionId=…}); each message posted there is taken with 202, and its answer comes on the
 * stream, after the call's progress when the agent asked for it. The stream owns the session: when the agent
 * leaves it, the session ends and every call it still has in flight is cancelled.
 */
@RestController
public final class LegacySseEndpoint {

    /** Requests posted but not yet taken up by the stream, per session: an agent that floods gets 429. */
    private static final int MAX_WAITING = Queues.SMALL_BUFFER_SIZE;

    private final AgentProtocol protocol;
    private final AgentEvents events;
    private final CatalogService catalogs;
    private final ReplicaIds names;
    /** Open sessions by their caller's subject and id ({@link AgentEndpoint#scoped}): another user's id finds none. */
    private final Map<String, Sinks.Many<JSONRPCRequest>> sessions = new ConcurrentHashMap<>();

    LegacySseEndpoint(AgentProtocol protocol, AgentEvents events, CatalogService catalogs, ReplicaIds names) {
        this.names = names;
        this.protocol = protocol;
        this.events = events;
        this.catalogs = catalogs;
    }

    /** The session is made when the stream is subscribed, and ends with it. */
    @GetMapping("/sse")
    ResponseEntity<Flux<ServerSentEvent<String>>> open(ServerWebExchange exchange) {
        return AgentEvents.stream().body(Flux.defer(() -> {
            String session = names.session();
            String scoped = AgentEndpoint.scoped(exchange, session);
            Sinks.Many<JSONRPCRequest> requests = Sinks.many().unicast().onBackpressureBuffer(Queues.<JSONRPCRequest>get(MAX_WAITING).get());
            sessions.put(scoped, requests);
            Flux<JSONRPCMessage> answers = requests.asFlux().flatMap(request -> protocol.answer(request, scoped, true));
            Flux<JSONRPCMessage> changes = catalogs.changes().map(integration -> (JSONRPCMessage) protocol.listChanged())
                    .onBackpressureLatest();
            return events.keptAlive(Flux.merge(answers, changes)
                            .map(events::message)
                            .startWith(ServerSentEvent.<String>builder().event("endpoint").data("/messages?sessionId=" + session).build()))
                    .doFinally(signal -> {
                        sessions.remove(scoped, requests);
                        protocol.end(scoped);
                    });
        }));
    }

    @PostMapping("/messages")
    ResponseEntity<String> receive(@RequestParam(name = "sessionId", required = false) String session,
            @RequestBody(required = false) String body, ServerWebExchange exchange) {
        Sinks.Many<JSONRPCRequest> requests = session == null ? null : sessions.get(AgentEndpoint.scoped(exchange, session));
        if (requests == null) {
            return text(HttpStatus.NOT_FOUND, "no open stream has session " + session + ": open one with GET /sse");
        }
        JSONRPCMessage message;
        try {
            message = protocol.read(body);
        } catch (UnreadableMessageException unreadable) {
            return text(HttpStatus.BAD_REQUEST, unreadable.getMessage());
        }
        if (message instanceof JSONRPCNotification notification) {
            protocol.notified(notification, AgentEndpoint.scoped(exchange, session));
        }
        else if (message instanceof JSONRPCRequest request) {
            Sinks.EmitResult taken;
            synchronized (requests) { // posts of one session may arrive at once; a unicast sink takes one at a time
                taken = requests.tryEmitNext(request);
            }
            if (taken == Sinks.EmitResult.FAIL_OVERFLOW) {
                return text(HttpStatus.TOO_MANY_REQUESTS, "session " + session + " has " + MAX_WAITING + " messages waiting");
            }
            if (taken.isFailure()) {
                return text(HttpStatus.NOT_FOUND, "the stream of session " + session + " has ended");
            }
        }
        return ResponseEntity.accepted().build();
    }

    private static ResponseEntity<String> text(HttpStatus status, @Nullable String message) {
        return ResponseEntity.status(status).contentType(MediaType.TEXT_PLAIN).body(message);
    }
}
