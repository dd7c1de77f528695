package dev.tether.api;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A plain HTTP/1.1 client for a running daemon, as an Executor client talks to it: JSON bodies, the bearer token
 * when one is given, nothing Spring-specific in between.
 */
final class ApiClient {

    static final JsonMapper JSON = JsonMapper.builder().build();
    /**
     * A bound that catches a hang, not a slow answer: a test's first execution in a loaded CI (the JavaScript engine's
     * first run, a server that validates its token at a Keycloak started moments ago) took 61 s at load 15.
     */
    private static final Duration TIMEOUT = Duration.ofMinutes(3);

    /** One answer: status, headers and the raw body. */
    record Reply(int status, HttpHeaders headers, String body) {

        JsonNode json() {
            return JSON.readTree(body);
        }

        /** The {@code _tag} of an error body; empty when there is none. */
        String tag() {
            return json().path("_tag").asString("");
        }

        /** The {@code message} of an error body; empty when there is none. */
        String message() {
            return json().path("message").asString("");
        }

        Optional<String> header(String name) {
            return headers.firstValue(name);
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }

    private final HttpClient http;
    private final String origin;
    private final String token;
    private final java.util.Map<String, String> headers;

    /** A client that sends {@code Authorization: Bearer <token>}; none when {@code token} is null. */
    ApiClient(int port, String token) {
        this(port, token, java.util.Map.of());
    }

    /** As {@link #ApiClient(int, String)}, with more headers on every request (a web session's cookie). */
    ApiClient(int port, String token, java.util.Map<String, String> headers) {
        this("http://127.0.0.1:" + port, HttpClient.newBuilder(), token, headers);
    }

    /** A client of the daemon at {@code origin} (e.g. {@code https://localhost:8443}), over a client built from {@code http}. */
    ApiClient(String origin, HttpClient.Builder http, String token) {
        this(origin, http, token, java.util.Map.of());
    }

    private ApiClient(String origin, HttpClient.Builder http, String token, java.util.Map<String, String> headers) {
        this.http = http.version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
        this.origin = origin;
        this.token = token;
        this.headers = headers;
    }

    Reply get(String path) {
        return send("GET", path, null);
    }

    Reply delete(String path) {
        return send("DELETE", path, null);
    }

    Reply post(String path, Object body) {
        return send("POST", path, body);
    }

    Reply put(String path, Object body) {
        return send("PUT", path, body);
    }

    Reply patch(String path, Object body) {
        return send("PATCH", path, body);
    }

    /** Sends {@code body} as JSON: a String is sent as it is (so it may be malformed on purpose), anything else serialized. */
    Reply send(String method, String path, Object body) {
        try {
            return sendAsync(method, path, body).join();
        }
        catch (CompletionException ex) {
            if (ex.getCause() instanceof IOException io) {
                throw new UncheckedIOException(method + " " + path, io);
            }
            throw ex;
        }
    }

    CompletableFuture<Reply> sendAsync(String method, String path, Object body) {
        BodyPublisher publisher = body == null ? BodyPublishers.noBody()
                : BodyPublishers.ofString(body instanceof String text ? text : JSON.writeValueAsString(body));
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(origin + path)).timeout(TIMEOUT)
                .method(method, publisher);
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        headers.forEach(request::header);
        return http.sendAsync(request.build(), BodyHandlers.ofString())
                .thenApply(response -> new Reply(response.statusCode(), response.headers(), response.body()));
    }
}
