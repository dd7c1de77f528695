package dev.tether.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * An OAuth-protected HTTP API of the test's own, as a resource server is: {@code GET /me} checks the bearer token
 * by RFC 7662 introspection at a real authorization server and answers what it says of the token, 401 when it is
 * not active. Its OpenAPI spec is at {@code /openapi.json}. The test can make it refuse the next requests, as a
 * server that revoked or rotated a token refuses it before its expiry. It records the tokens it was sent.
 */
public final class ProtectedApi implements AutoCloseable {

    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI introspection;
    private final AtomicInteger refuseNext = new AtomicInteger();
    private final List<String> presented = new CopyOnWriteArrayList<>();

    private ProtectedApi(URI introspection) throws IOException {
        this.introspection = introspection;
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setExecutor(threads);
        server.createContext("/openapi.json", exchange -> answer(exchange, 200, spec()));
        server.createContext("/me", this::me);
        server.start();
    }

    /** An API whose tokens {@code introspection} (an RFC 7662 endpoint) vouches for. */
    public static ProtectedApi checkingWith(URI introspection) {
        try {
            return new ProtectedApi(introspection);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The next {@code requests} requests are refused with 401 whatever token they carry. */
    public void refuseNext(int requests) {
        refuseNext.set(requests);
    }

    /** The {@code Authorization} headers it was sent, in order. */
    public List<String> presented() {
        return List.copyOf(presented);
    }

    private String spec() {
        return """
                {"openapi": "3.0.3", "info": {"title": "Protected", "version": "1"}, "servers": [{"url": "%s"}],
                 "paths": {"/me": {"get": {"operationId": "me", "tags": ["profile"],
                   "responses": {"200": {"description": "who the token is for"}}}}}}""".formatted(baseUrl());
    }

    private void me(HttpExchange exchange) throws IOException {
        String authorization = String.valueOf(exchange.getRequestHeaders().getFirst("Authorization"));
        presented.add(authorization);
        if (refuseNext.getAndUpdate(left -> Math.max(0, left - 1)) > 0 || !authorization.startsWith("Bearer ")) {
            answer(exchange, 401, "{\"error\":\"invalid_token\"}");
            return;
        }
        try {
            HttpResponse<String> checked = http.send(HttpRequest.newBuilder(introspection).timeout(Duration.ofSeconds(10))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString("token=" + URLEncoder.encode(authorization.substring(7), StandardCharsets.UTF_8)))
                    .build(), HttpResponse.BodyHandlers.ofString());
            boolean active = checked.statusCode() == 200 && checked.body().replace(" ", "").contains("\"active\":true");
            answer(exchange, active ? 200 : 401, active ? checked.body() : "{\"error\":\"invalid_token\"}");
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            answer(exchange, 502, "{}");
        }
    }

    private static void answer(HttpExchange exchange, int status, String body) throws IOException {
        TokenProxy.answer(exchange, status, "application/json", body);
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
