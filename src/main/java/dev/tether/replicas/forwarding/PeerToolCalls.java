package dev.tether.replicas.forwarding;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.Map;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.ElicitFormRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitUrlRequest;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import org.jspecify.annotations.Nullable;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.mcp.ElicitationHandler;
import dev.tether.mcp.ProgressListener;
import dev.tether.replicas.ConnectionOwners.Peer;

/**
 * The client of a tool call at a connection's owner ({@code api.PeerCallsController}): the call goes out as
 * {@code POST /api/replicas/calls} over the peers' client ({@link PeerExchange}), and its answer comes back as an
 * event stream of progress, server questions, and a result or a failure.
 */
@Component
final class PeerToolCalls {

    private static final McpJsonMapper MCP_JSON = McpJsonDefaults.getMapper();
    private static final ParameterizedTypeReference<ServerSentEvent<String>> EVENTS = new ParameterizedTypeReference<>() {
    };

    private final PeerExchange peers;
    private final JsonMapper json;

    PeerToolCalls(PeerExchange peers, JsonMapper json) {
        this.peers = peers;
        this.json = json;
    }

    /**
     * Calls the tool at {@code address} on {@code peer} ({@code api.PeerCallsController}), marked forwarded so that the
     * peer serves it itself. What the call says on the way reaches this call's context as a local call's would: each
     * progress notification its {@link ProgressListener}, each server question its {@link ElicitationHandler}, whose
     * answer goes back to the peer. A caller that leaves cancels the exchange, which closes its connection, and the
     * peer's call is cancelled with it. A peer that answers anything but a result fails the call with
     * {@link PeerCallException}, one that provably did not take it (refused the connection, or is draining) with
     * {@link OwnerLeftException}.
     */
    Mono<CallToolResult> callTool(Peer peer, String address, Map<String, Object> arguments) {
        return Mono.deferContextual(context -> {
            ProgressListener progress = context.getOrDefault(ProgressListener.class, null);
            ElicitationHandler questions = ElicitationHandler.of(context);
            PeerCall call = new PeerCall(address, arguments, progress != null,
                    questions != ElicitationHandler.ACCEPT_ALL);
            return peers.client().post().uri(URI.create("http://" + peer.address() + "/api/replicas/calls"))
                    .contentType(MediaType.APPLICATION_JSON)
                    .accept(MediaType.TEXT_EVENT_STREAM)
                    .bodyValue(json.writeValueAsBytes(call))
                    .exchangeToFlux(answer -> PeerExchange.draining(answer) ? Flux.<ServerSentEvent<String>>from(peers.left(answer, peer))
                            : events(answer, peer, address))
                    .flatMap(event -> switch (String.valueOf(event.event())) {
                        case "progress" -> {
                            if (progress != null) {
                                progress.onProgress(read(event.data(), ProgressNotification.class));
                            }
                            yield Mono.<CallToolResult>empty();
                        }
                        case "question" -> answer(peer, read(event.data(), PeerQuestion.class), questions).then(Mono.<CallToolResult>empty());
                        case "result" -> Mono.just(read(event.data(), CallToolResult.class));
                        case "failure" -> {
                            PeerFailure failure = read(event.data(), PeerFailure.class);
                            yield Mono.<CallToolResult>error(new PeerCallException(peer, "the connection of " + address, failure.status(),
                                    json.writeValueAsString(failure.body())));
                        }
                        default -> Mono.<CallToolResult>empty();
                    })
                    .next()
                    .switchIfEmpty(Mono.error(() -> new PeerCallException(peer, "the connection of " + address,
                            HttpStatus.OK.value(), "the answer ended without a result")));
        }).onErrorMap(WebClientRequestException.class, failed -> peers.ownerLeftOr(failed, peer));
    }

    /** A question of the peer's call, as {@code api.PeerCallsController} sends it. */
    private record PeerQuestion(String id, Map<String, Object> request) {
    }

    /** A failed call at the peer: the status and body its {@code POST /api/tools/call} would have answered. */
    private record PeerFailure(int status, Object body) {
    }

    private Flux<ServerSentEvent<String>> events(ClientResponse answer, Peer peer, String address) {
        int status = answer.statusCode().value();
        peers.countAnswer(status);
        return status == HttpStatus.OK.value() ? answer.bodyToFlux(EVENTS)
                : answer.bodyToMono(String.class).defaultIfEmpty("")
                        .flatMapMany(text -> Flux.error(new PeerCallException(peer, "the connection of " + address, status, text)));
    }

    /** Puts the peer's question to this call's user, and posts the answer back to the peer. */
    private Mono<Void> answer(Peer peer, PeerQuestion question, ElicitationHandler questions) {
        // As the MCP client reads elicitation/create: a URL to visit when its mode says so, otherwise a form.
        Class<? extends ElicitRequest> type = "url".equals(question.request().get("mode")) ? ElicitUrlRequest.class
                : ElicitFormRequest.class;
        return questions.elicit(MCP_JSON.convertValue(question.request(), type))
                .flatMap(answer -> peers.client().post().uri(URI.create("http://" + peer.address() + "/api/replicas/answers/" + question.id()))
                        .contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(write(answer))
                        .retrieve()
                        .toBodilessEntity())
                .then();
    }

    private static <T> T read(@Nullable String data, Class<T> type) {
        try {
            return MCP_JSON.readValue(data == null ? "null" : data, type);
        }
        catch (IOException unreadable) {
            throw new UncheckedIOException(unreadable);
        }
    }

    private static String write(Object value) {
        try {
            return MCP_JSON.writeValueAsString(value);
        }
        catch (IOException unwritable) {
            throw new UncheckedIOException(unwritable);
        }
    }
}
