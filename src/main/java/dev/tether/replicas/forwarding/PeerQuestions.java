package dev.tether.replicas.forwarding;

import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import io.modelcontextprotocol.spec.McpSchema.ElicitRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A server's questions during calls that peers sent here ({@code api.PeerCallsController}), each waiting for the answer
 * the calling replica posts back once its user (an execution's resume, an agent) has given it. A question lives as
 * long as its call: when the call ends or its caller leaves, it is forgotten, and a late answer finds nothing.
 */
@Component
public final class PeerQuestions {

    private final Map<String, Sinks.One<ElicitResult>> waiting = new ConcurrentHashMap<>();

    /** Announces {@code request} under a new id through {@code announce}, then waits for the answer posted for that id. */
    public Mono<ElicitResult> ask(ElicitRequest request, Consumer<String> announce) {
        return Mono.using(() -> {
                    String id = UUID.randomUUID().toString();
                    waiting.put(id, Sinks.one());
                    return id;
                },
                id -> Objects.requireNonNull(waiting.get(id)).asMono().doOnSubscribe(subscribed -> announce.accept(id)),
                waiting::remove);
    }

    /** Hands {@code answer} to the question {@code id}; false when no call waits for it (ended, or never asked). */
    public boolean answer(String id, ElicitResult answer) {
        Sinks.One<ElicitResult> question = waiting.get(id);
        return question != null && question.tryEmitValue(answer).isSuccess();
    }
}
