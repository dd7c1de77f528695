package dev.tether.replicas.forwarding;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.web.util.UriUtils;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.execution.ExecutionAnswer;
import dev.tether.execution.ExecutionNotFoundException;
import dev.tether.execution.Executions;
import dev.tether.execution.ResumeAction;
import dev.tether.execution.ResumeAnywhere;
import dev.tether.execution.ResumeContentException;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.ReplicaIds;

/**
 * {@link ResumeAnywhere} across replicas: a resume for an execution whose live context another live replica holds (its
 * id names the replica that paused it) goes there as {@code POST /api/executions/{id}/resume}, the route
 * {@link HomeForwarding} would have passed on, which is the fast path; anything else resumes here, where
 * {@link Executions#resume} rebuilds it from its journal when it is not held here. A holder that does not take the
 * connection (gone, restarting) is no loss either: its executions are journals in the store, resumed here by replay.
 */
@Component
final class HomeResumes implements ResumeAnywhere {

    private final Executions executions;
    private final ConnectionOwners owners;
    private final ReplicaIds names;
    private final PeerExchange peers;
    private final JsonMapper json;

    HomeResumes(Executions executions, ConnectionOwners owners, ReplicaIds names, PeerExchange peers, JsonMapper json) {
        this.executions = executions;
        this.owners = owners;
        this.names = names;
        this.peers = peers;
        this.json = json;
    }

    @Override
    public Mono<ExecutionAnswer> resume(String executionId, ResumeAction action, @Nullable Map<String, Object> content) {
        return Mono.defer(() -> names.elsewhere(executionId).flatMap(owners::peer)
                .map(home -> {
                    Map<String, Object> body = new LinkedHashMap<>();
                    body.put("action", action.name().toLowerCase(Locale.ROOT));
                    if (content != null) {
                        body.put("content", content);
                    }
                    String path = "/api/executions/" + UriUtils.encodePathSegment(executionId, StandardCharsets.UTF_8) + "/resume";
                    return peers.postJson(home, path, body, "execution " + executionId)
                            .map(answer -> answered(executionId, answer))
                            .onErrorResume(OwnerLeftException.class, left -> executions.resume(executionId, action, content));
                })
                .orElseGet(() -> executions.resume(executionId, action, content)));
    }

    /** The peer's answer as the local resume would have ended: an answer, or the same failures. */
    private ExecutionAnswer answered(String executionId, PeerExchange.PeerAnswer answer) {
        if (answer.status() == HttpStatus.NOT_FOUND.value()) {
            throw new ExecutionNotFoundException(executionId);
        }
        JsonNode body = json.readTree(answer.body());
        if (answer.status() == HttpStatus.BAD_REQUEST.value()) {
            throw new ResumeContentException(body.path("message").asString(answer.body()));
        }
        if (answer.status() != HttpStatus.OK.value()) {
            throw new IllegalStateException("the replica that holds execution " + executionId + " answered its resume with "
                    + answer.status() + ": " + answer.body());
        }
        JsonNode structured = body.get("structured");
        JsonNode isError = body.get("isError");
        return new ExecutionAnswer(body.path("status").asString(), body.path("text").asString(),
                structured == null ? null : structured.toString(), isError == null || isError.isNull() ? null : isError.asBoolean());
    }
}
