package dev.tether.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A loopback HTTP proxy in front of one upstream server that records what arrives: method, path, query and
 * headers of every request. Bodies are streamed through unbuffered (every chunk read from upstream is flushed
 * to the client at once), so a long-lived SSE stream works through it.
 */
final class RecordingProxy implements AutoCloseable {

    /** One request as it reached the proxy, header names lower-cased. */
    record Seen(String method, String path, String rawQuery, Map<String, String> headers) {

        Optional<String> header(String name) {
            return Optional.ofNullable(headers.get(name.toLowerCase(Locale.ROOT)));
        }

        /** The decoded query parameters (the last value of a repeated name wins). */
        Map<String, String> query() {
            Map<String, String> params = new LinkedHashMap<>();
            if (rawQuery == null || rawQuery.isEmpty()) {
                return params;
            }
            for (String pair : rawQuery.split("&")) {
                String[] kv = pair.split("=", 2);
                params.put(URLDecoder.decode(kv[0], StandardCharsets.UTF_8),
                        kv.length > 1 ? URLDecoder.decode(kv[1], StandardCharsets.UTF_8) : "");
            }
            return params;
        }

        @Override
        public String toString() {
            return method + " " + path + (rawQuery == null ? "" : "?" + rawQuery);
        }
    }

    /** Hop-by-hop headers, and those the JDK client refuses to set itself. */
    private static final Set<String> NOT_FORWARDED = Set.of("connection", "keep-alive", "proxy-connection", "te", "trailer",
            "transfer-encoding", "upgrade", "http2-settings", "host", "content-length", "expect");

    private final URI upstream;
    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "recording-proxy");
        thread.setDaemon(true);
        return thread;
    });
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final Set<InputStream> streaming = ConcurrentHashMap.newKeySet();

    RecordingProxy(int upstreamPort) throws IOException {
        this.upstream = URI.create("http://127.0.0.1:" + upstreamPort);
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::forward);
        server.setExecutor(threads);
        server.start();
    }

    /** Where clients reach the proxy, e.g. {@code http://127.0.0.1:PORT}. */
    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Every request so far, in arrival order. */
    List<Seen> seen() {
        return new ArrayList<>(seen);
    }

    private void forward(HttpExchange exchange) throws IOException {
        try {
            URI uri = exchange.getRequestURI();
            String method = exchange.getRequestMethod();
            Map<String, String> headers = new LinkedHashMap<>();
            exchange.getRequestHeaders().forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), String.join(",", values)));
            seen.add(new Seen(method, uri.getRawPath(), uri.getRawQuery(), headers));

            HttpRequest.Builder request = HttpRequest.newBuilder(upstream.resolve(uri.getRawPath()
                    + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery())));
            exchange.getRequestHeaders().forEach((name, values) -> {
                if (!NOT_FORWARDED.contains(name.toLowerCase(Locale.ROOT))) {
                    values.forEach(value -> request.header(name, value));
                }
            });
            byte[] body = exchange.getRequestBody().readAllBytes();
            request.method(method, body.length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
            HttpResponse<InputStream> response;
            try {
                response = client.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
            }
            catch (IOException ex) {
                exchange.sendResponseHeaders(502, -1);
                return;
            }
            try (InputStream in = response.body()) {
                streaming.add(in);
                response.headers().map().forEach((name, values) -> {
                    if (!NOT_FORWARDED.contains(name.toLowerCase(Locale.ROOT)) && !name.startsWith(":")) {
                        exchange.getResponseHeaders().put(name, values);
                    }
                });
                long length = response.headers().firstValueAsLong("content-length").orElse(-1);
                int status = response.statusCode();
                boolean bodiless = method.equals("HEAD") || status == 204 || status == 304 || length == 0;
                exchange.sendResponseHeaders(status, bodiless ? -1 : Math.max(length, 0)); // 0: chunked, as it comes
                if (bodiless) {
                    return;
                }
                OutputStream out = exchange.getResponseBody();
                byte[] buffer = new byte[8192];
                for (int read; (read = in.read(buffer)) >= 0;) {
                    out.write(buffer, 0, read);
                    out.flush(); // an SSE event must not wait for the next one
                }
            }
            finally {
                streaming.remove(response.body());
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        finally {
            exchange.close();
        }
    }

    @Override
    public void close() throws InterruptedException {
        server.stop(0);
        // Streams upstream keeps open (SSE) block their copying threads in a read no interrupt ends: close them.
        for (InputStream in : streaming) {
            try {
                in.close();
            }
            catch (IOException ex) {
                // closing is all we want of it
            }
        }
        threads.shutdownNow();
        threads.awaitTermination(5, TimeUnit.SECONDS);
    }
}
