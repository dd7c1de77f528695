package dev.tether.api;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.testsupport.PrometheusScrape;

/**
 * A real HTTP client of a running Tether, as the Executor app is one: Reactor Netty underneath, and one TCP
 * connection per request (no pool), so disposing a request's subscription closes its connection, which is
 * what a browser tab that reloads does to its in-flight requests.
 */
final class TetherClient {

    /** Bound on every blocking call; generous, a health check of a slow server takes seconds. */
    static final Duration CALL_BOUND = Duration.ofSeconds(60);

    static final JsonMapper JSON = JsonMapper.builder().build();

    /** An answer of any status, with its body as text. */
    record Reply(int status, HttpHeaders headers, String body) {

        JsonNode json() {
            return JSON.readTree(body);
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }

    private final String baseUrl;
    private final WebClient web;

    TetherClient(int port, String token) {
        this.baseUrl = "http://127.0.0.1:" + port;
        HttpClient http = HttpClient.create(ConnectionProvider.newConnection());
        WebClient.Builder builder = WebClient.builder()
                .baseUrl(baseUrl)
                .clientConnector(new ReactorClientHttpConnector(http))
                .codecs(codecs -> codecs.defaultCodecs().maxInMemorySize(8 * 1024 * 1024));
        if (token != null) {
            builder.defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + token);
        }
        this.web = builder.build();
    }

    String baseUrl() {
        return baseUrl;
    }

    /** The same server, asked with another token (or none). */
    TetherClient withToken(String token) {
        return new TetherClient(Integer.parseInt(baseUrl.substring(baseUrl.lastIndexOf(':') + 1)), token);
    }

    /** A request as a cold Mono: nothing is sent until it is subscribed; disposing it closes the connection. */
    Mono<Reply> exchange(HttpMethod method, String path, Object body) {
        WebClient.RequestBodySpec request = web.method(method).uri(path);
        WebClient.RequestHeadersSpec<?> withBody = body == null ? request
                : body instanceof byte[] raw ? request.contentType(MediaType.APPLICATION_JSON).bodyValue(raw)
                : request.contentType(MediaType.APPLICATION_JSON).bodyValue(JSON.writeValueAsBytes(body));
        return withBody.exchangeToMono(response -> response.bodyToMono(byte[].class)
                .map(bytes -> new String(bytes, StandardCharsets.UTF_8))
                .defaultIfEmpty("")
                .map(text -> new Reply(response.statusCode().value(), response.headers().asHttpHeaders(), text)));
    }

    /** A request whose path is sent exactly as given: no encoding, no normalising. */
    Reply raw(HttpMethod method, String path) {
        Reply reply = web.method(method).uri(java.net.URI.create(baseUrl + path))
                .exchangeToMono(response -> response.bodyToMono(byte[].class)
                        .map(bytes -> new String(bytes, StandardCharsets.UTF_8))
                        .defaultIfEmpty("")
                        .map(text -> new Reply(response.statusCode().value(), response.headers().asHttpHeaders(), text)))
                .block(CALL_BOUND);
        if (reply == null) {
            throw new AssertionError(method + " " + path + " gave no answer");
        }
        return reply;
    }

    Reply call(HttpMethod method, String path, Object body) {
        Reply reply = exchange(method, path, body).block(CALL_BOUND);
        if (reply == null) {
            throw new AssertionError(method + " " + path + " gave no answer");
        }
        return reply;
    }

    Reply get(String path) {
        return call(HttpMethod.GET, path, null);
    }

    Reply post(String path, Object body) {
        return call(HttpMethod.POST, path, body);
    }

    Reply delete(String path) {
        return call(HttpMethod.DELETE, path, null);
    }

    /**
     * Registers a stdio server and makes its connection {@code org/<slug>/default}, the two steps Executor's app and
     * CLI take; fails unless Tether answers both.
     */
    String register(String slug, List<String> argv) {
        return register(slug, argv, Map.of());
    }

    String register(String slug, List<String> argv, Map<String, String> env) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("transport", "stdio");
        body.put("name", "Server " + slug);
        body.put("slug", slug);
        body.put("command", argv.get(0));
        body.put("args", argv.subList(1, argv.size()));
        body.put("env", env);
        Reply reply = post("/api/mcp/servers", body);
        if (reply.status() != 200) {
            throw new AssertionError("registering " + slug + " failed: " + reply);
        }
        String registered = reply.json().get("slug").asString();
        Reply connected = post("/api/connections", defaultConnection(registered));
        if (connected.status() != 200) {
            throw new AssertionError("connecting " + registered + " failed: " + connected);
        }
        return registered;
    }

    /** As {@link #register(String, List)}, then syncs the connection's catalog; fails unless Tether answers all three. */
    String registerAndSync(String slug, List<String> argv) {
        String registered = register(slug, argv);
        Reply synced = post("/api/connections/org/" + registered + "/default/refresh", null);
        if (synced.status() != 200) {
            throw new AssertionError("syncing " + registered + " failed: " + synced);
        }
        return registered;
    }

    /** Body of {@code POST /api/connections} for {@code org/<integration>/default}, with no credentials. */
    static Map<String, Object> defaultConnection(String integration) {
        return Map.of("owner", "org", "name", "default", "integration", integration, "template", "none", "values", Map.of());
    }

    static String healthPath(String integration, String connection) {
        return "/api/connections/org/" + integration + "/" + connection + "/health";
    }

    /** A health check of {@code org/<integration>/default}, cold. */
    Mono<Reply> healthLater(String integration) {
        return exchange(HttpMethod.POST, healthPath(integration, "default"), null);
    }

    Reply health(String integration) {
        return post(healthPath(integration, "default"), null);
    }

    /** The Prometheus scrape. */
    PrometheusScrape metrics() {
        Reply reply = get("/actuator/prometheus");
        if (reply.status() != 200) {
            throw new AssertionError("/actuator/prometheus: " + reply);
        }
        return new PrometheusScrape(reply.body());
    }
}
