package dev.tether.api;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Map;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.tether.api.input.Bounds;
import dev.tether.api.input.Inputs;
import dev.tether.api.input.InvalidInputException;
import dev.tether.calls.ToolCalls;
import dev.tether.mcp.ElicitationHandler;
import dev.tether.mcp.ProgressListener;
import dev.tether.replicas.forwarding.PeerCall;
import dev.tether.replicas.forwarding.PeerExchange;
import dev.tether.replicas.forwarding.PeerQuestions;

/**
 * Where a replica calls a tool of a connection this replica owns, for an execution or an agent of its own
 * ({@code replicas.forwarding.PeerToolCalls#callTool}): the call runs here, on the warm session, and what it says on the way comes back
 * as server-sent events, so that the caller's user sees it as for a local call: {@code progress} (each
 * {@code notifications/progress}), {@code question} (a server's {@code elicitation/create}, answered by the caller at
 * {@code POST /api/replicas/answers/{id}} once its user has), then {@code result} (the {@code CallToolResult}) or
 * {@code failure} (the status and body {@code POST /api/tools/call} would have answered). The caller leaving cancels
 * the call, as for any request. Only a peer that proved itself may call these routes: a client gets 403
 * {@code PeerOnlyError}.
 */
@RestController
final class PeerCallsController {

    private static final McpJsonMapper MCP_JSON = McpJsonDefaults.getMapper();
    private static final Sinks.EmitFailureHandler TAKE_TURNS = Sinks.EmitFailureHandler.busyLooping(Duration.ofMillis(100));

    private final ToolCalls calls;
    private final PeerQuestions questions;
    private final ApiErrors errors;

    PeerCallsController(ToolCalls calls, PeerQuestions questions, ApiErrors errors) {
        this.calls = calls;
        this.questions = questions;
        this.errors = errors;
    }

    @PostMapping(value = "/api/replicas/calls", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    Flux<ServerSentEvent<String>> call(@RequestBody PeerCall request, ServerWebExchange exchange) {
        peerOnly(exchange);
        Bounds.check(request);
        String address = Inputs.requireText(request.address(), "address");
        return Flux.defer(() -> {
            // The call's progress and questions arrive on the session's thread, its answer on another: one stream.
            Sinks.Many<ServerSentEvent<String>> events = Sinks.many().unicast().onBackpressureBuffer();
            Mono<ServerSentEvent<String>> call = calls.call(address, request.args() == null ? Map.of() : request.args())
                    .map(answer -> ServerSentEvent.<String>builder().event("result").data(answer.json()).build())
                    .onErrorResume(Exception.class, failed -> Mono.just(failure(failed)));
            if (request.progress()) {
                call = call.contextWrite(ProgressListener.of(progress -> events.emitNext(event("progress", progress), TAKE_TURNS)));
            }
            if (request.questions()) {
                call = call.contextWrite(ElicitationHandler.of(question -> questions.ask(question,
                        id -> events.emitNext(event("question", Map.of("id", id, "request", question)), TAKE_TURNS))));
            }
            Mono<Void> answered = call
                    .doOnNext(last -> events.emitNext(last, TAKE_TURNS))
                    .doFinally(signal -> events.emitComplete(TAKE_TURNS))
                    .then();
            return Flux.merge(events.asFlux(), answered.then(Mono.empty()));
        });
    }

    /** The answer to a question of a call here, from the replica whose user answered it. */
    @PostMapping("/api/replicas/answers/{id}")
    ResponseEntity<Map<String, Object>> answer(@PathVariable String id, @RequestBody String answer, ServerWebExchange exchange) {
        peerOnly(exchange);
        Bounds.check("id", id);
        ElicitResult result;
        try {
            result = MCP_JSON.readValue(answer, ElicitResult.class);
        }
        catch (IOException unreadable) {
            throw InvalidInputException.decode("the answer is not an elicitation result: " + unreadable.getMessage());
        }
        return questions.answer(id, result) ? ResponseEntity.ok(Map.of())
                : ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("_tag", "QuestionNotFoundError", "id", id,
                        "message", "no call here waits for an answer to question " + id + ": it ended, or was never asked"));
    }

    /** These routes answer peers alone ({@code replicas.forwarding.PeerAuthentication}), whatever token a client has. */
    private static void peerOnly(ServerWebExchange exchange) {
        if (!PeerExchange.forwarded(exchange)) {
            throw new PeerOnlyException(exchange.getRequest().getPath().value());
        }
    }

    private ServerSentEvent<String> failure(Exception failed) {
        ResponseEntity<Map<String, Object>> answer = errors.answer(failed);
        return event("failure", Map.of("status", answer.getStatusCode().value(), "body", answer.getBody()));
    }

    private static ServerSentEvent<String> event(String name, Object data) {
        try {
            return ServerSentEvent.<String>builder().event(name).data(MCP_JSON.writeValueAsString(data)).build();
        }
        catch (IOException unwritable) {
            throw new UncheckedIOException(unwritable);
        }
    }
}
