package dev.tether.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import tools.jackson.databind.JsonNode;

/**
 * One MCP session over the streamable HTTP transport, as an agent holds it: {@code initialize} (its
 * {@code Mcp-Session-Id} kept), {@code notifications/initialized}, then requests, each answered with one JSON message
 * or with an event stream that carries it (the TypeScript SDK's servers answer that way), and {@code DELETE} at the
 * end. The same client for every gateway {@code bench/peers.sh} compares, so that none is measured with a client of
 * its own.
 */
final class StreamableHttpClient implements AutoCloseable {

    private static final String SESSION_HEADER = "Mcp-Session-Id";
    private static final String PROTOCOL_VERSION = "2025-06-18";

    private final HttpClient http;
    private final URI endpoint;
    private final Map<String, String> headers;
    private final AtomicLong ids = new AtomicLong();
    private String session;

    private StreamableHttpClient(HttpClient http, URI endpoint, Map<String, String> headers) {
        this.http = http;
        this.endpoint = endpoint;
        this.headers = headers;
    }

    /** A session opened on {@code endpoint}: the handshake done, ready for requests. */
    static StreamableHttpClient open(HttpClient http, URI endpoint, Map<String, String> headers) throws Exception {
        StreamableHttpClient client = new StreamableHttpClient(http, endpoint, headers);
        HttpResponse<String> initialized = client.post("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                + "{\"protocolVersion\":\"" + PROTOCOL_VERSION + "\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"tether-peers-bench\",\"version\":\"1\"}}}");
        client.answer(initialized, 0);
        client.session = initialized.headers().firstValue(SESSION_HEADER).orElse(null);
        HttpResponse<String> notified = client.post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        if (notified.statusCode() / 100 != 2) {
            throw new IllegalStateException("notifications/initialized: " + notified.statusCode() + " " + notified.body());
        }
        return client;
    }

    /** Calls {@code tool} and returns its result; fails on a JSON-RPC error or a result marked {@code isError}. */
    JsonNode callTool(String tool, String argumentsJson) throws Exception {
        long id = ids.incrementAndGet();
        JsonNode result = answer(post("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\""
                + tool + "\",\"arguments\":" + argumentsJson + "}}"), id);
        if (result.path("isError").asBoolean(false)) {
            throw new IllegalStateException("tools/call " + tool + " answered an error: " + result);
        }
        return result;
    }

    private HttpResponse<String> post(String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(endpoint)
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(request::header);
        if (session != null) {
            request.header(SESSION_HEADER, session).header("MCP-Protocol-Version", PROTOCOL_VERSION);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The result of the response with {@code id}, from a JSON body or from the data lines of an event stream. */
    private JsonNode answer(HttpResponse<String> response, long id) {
        if (response.statusCode() != 200) {
            throw new IllegalStateException("status " + response.statusCode() + ": " + response.body());
        }
        boolean events = response.headers().firstValue("Content-Type").filter(type -> type.startsWith("text/event-stream")).isPresent();
        Optional<JsonNode> message = events
                ? response.body().lines().filter(line -> line.startsWith("data:")).map(line -> BenchClient.JSON.readTree(line.substring(5)))
                        .filter(json -> json.path("id").asLong(-1) == id).findFirst()
                : Optional.of(BenchClient.JSON.readTree(response.body()));
        JsonNode answer = message.orElseThrow(() -> new IllegalStateException("no answer to request " + id + " in " + response.body()));
        if (answer.has("error")) {
            throw new IllegalStateException("request " + id + " failed: " + answer.get("error"));
        }
        return answer.get("result");
    }

    /** Ends the session ({@code DELETE}), as a well-behaved agent does; a gateway that refuses it is not this client's concern. */
    @Override
    public void close() {
        if (session == null) {
            return;
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(endpoint).timeout(Duration.ofSeconds(10)).DELETE()
                .header(SESSION_HEADER, session).header("MCP-Protocol-Version", PROTOCOL_VERSION);
        headers.forEach(request::header);
        try {
            http.send(request.build(), HttpResponse.BodyHandlers.discarding());
        } catch (Exception ignored) {
            // the gateway may be gone already
        }
    }
}
