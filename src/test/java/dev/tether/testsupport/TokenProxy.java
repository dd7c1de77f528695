package dev.tether.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A token endpoint in front of a real one that counts what it is asked. Codes are exchanged by the real endpoint,
 * whose answer gets a refresh token added; refresh grants are answered here (the SDK's example cannot refresh)
 * with the access token the real one issued, so that the resource server keeps accepting it: each is counted,
 * and takes {@link #REFRESH_DELAY}, so that callers that arrive together find it in flight. {@code /garbage}
 * answers 200 with HTML and {@code /hang} never answers: token endpoints as they go wrong. {@code /misdirected} is a
 * protected resource whose RFC 9728 metadata names the real authorization server by another host name than the
 * one it calls itself (127.0.0.1 for localhost), as a misconfigured resource does.
 */
public final class TokenProxy implements AutoCloseable {

    public static final Duration REFRESH_DELAY = Duration.ofMillis(300);
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI upstream;
    private final AtomicInteger codeExchanges = new AtomicInteger();
    private final AtomicInteger refreshes = new AtomicInteger();
    private final AtomicReference<String> accessToken = new AtomicReference<>();
    private volatile boolean refuseRefresh;

    private TokenProxy(URI upstream) throws IOException {
        this.upstream = upstream;
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setExecutor(threads);
        server.createContext("/token", this::token);
        server.createContext("/.well-known/oauth-protected-resource/misdirected", exchange -> answer(exchange, 200, "application/json",
                JSON.writeValueAsString(java.util.Map.of("resource", url("/misdirected"), "authorization_servers",
                        java.util.List.of(upstream.resolve("/").toString().replace("localhost", "127.0.0.1"))))));
        server.createContext("/garbage", exchange -> answer(exchange, 200, "text/html", "<html>no JSON here</html>"));
        server.createContext("/hang", exchange -> {
            try {
                Thread.sleep(60_000);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            exchange.close();
        });
        server.start();
    }

    /** A proxy for the token endpoint at {@code upstream}. */
    public static TokenProxy in(URI upstream) {
        try {
            return new TokenProxy(upstream);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    public String url(String path) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + path;
    }

    public int refreshes() {
        return refreshes.get();
    }

    public int codeExchanges() {
        return codeExchanges.get();
    }

    /** From now on, refresh grants are refused with {@code invalid_grant}, as for a revoked refresh token. */
    public void refuseRefresh(boolean refuse) {
        this.refuseRefresh = refuse;
    }

    private void token(HttpExchange exchange) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        Map<String, String> form = form(body);
        if ("refresh_token".equals(form.get("grant_type"))) {
            int count = refreshes.incrementAndGet();
            try {
                Thread.sleep(REFRESH_DELAY.toMillis());
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            if (refuseRefresh) {
                answer(exchange, 400, "application/json", "{\"error\":\"invalid_grant\",\"error_description\":\"refresh token revoked\"}");
                return;
            }
            ObjectNode token = JSON.createObjectNode().put("access_token", accessToken.get()).put("token_type", "Bearer")
                    .put("expires_in", 3600).put("refresh_token", "refresh-" + count);
            answer(exchange, 200, "application/json", JSON.writeValueAsString(token));
            return;
        }
        codeExchanges.incrementAndGet();
        try {
            HttpResponse<String> real = http.send(HttpRequest.newBuilder(upstream).timeout(Duration.ofSeconds(10))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .header("Accept", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            if (real.statusCode() != 200) {
                answer(exchange, real.statusCode(), "application/json", real.body());
                return;
            }
            ObjectNode token = (ObjectNode) JSON.readTree(real.body());
            accessToken.set(token.path("access_token").asString());
            token.put("refresh_token", "refresh-0");
            answer(exchange, 200, "application/json", JSON.writeValueAsString(token));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            answer(exchange, 502, "text/plain", "interrupted");
        }
    }

    private static Map<String, String> form(String body) {
        Map<String, String> form = new HashMap<>();
        for (String pair : body.split("&")) {
            int equals = pair.indexOf('=');
            if (equals > 0) {
                form.put(URLDecoder.decode(pair.substring(0, equals), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8));
            }
        }
        return form;
    }

    static void answer(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
