package dev.tether.replicas.forwarding;

import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Executor's error body ({@code {_tag, message}}) as the forwarding filters write it, before any controller (and so
 * before {@code api.ApiErrors}) is reached, and as they read a peer's.
 */
@Component
final class ErrorBodies {

    private final JsonMapper json;

    ErrorBodies(JsonMapper json) {
        this.json = json;
    }

    /** Answers {@code status} with Executor's error body: {@code {_tag, message}}. */
    Mono<Void> refuse(ServerHttpResponse response, HttpStatus status, String tag, String message) {
        response.setStatusCode(status);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        byte[] body = json.writeValueAsBytes(Map.of("_tag", tag, "message", message));
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    /** The {@code message} of an error body, or the body itself when it has none. */
    String message(String body) {
        try {
            JsonNode message = json.readTree(body).path("message");
            return message.isString() ? message.asString() : body;
        }
        catch (RuntimeException notJson) {
            return body;
        }
    }
}
