package dev.tether.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.zip.GZIPInputStream;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A Zipkin collector's span intake, and no more: {@code POST /api/v2/spans} with a JSON v2 list of spans (what a Zipkin
 * exporter sends by default), gzipped or not, answered {@code 202} as Zipkin does; every span is kept for the test to read. A body that
 * is no span list is answered {@code 400} and kept out (why, in the waits' failure), so a sender that speaks something
 * else fails the test's waits. Zipkin leaves out a span's {@code name} when it has none: it reads as "" here.
 */
public final class ZipkinReceiver implements AutoCloseable {

    /** One span as Zipkin's v2 model has it; {@code parentId} is null for a trace's root, {@code kind} for a local span. */
    public record Span(String traceId, String parentId, String id, String kind, String name, String service, Map<String, String> tags) {
    }

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpServer server;
    private final List<Span> spans = new ArrayList<>();
    /** Why each refused body was refused, for a failure's reader. */
    private final List<String> refused = new ArrayList<>();

    private ZipkinReceiver(HttpServer server) {
        this.server = server;
    }

    public static ZipkinReceiver start() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        ZipkinReceiver receiver = new ZipkinReceiver(server);
        server.createContext("/api/v2/spans", receiver::receive);
        server.start();
        return receiver;
    }

    /** Where a Zipkin exporter sends: {@code management.tracing.export.zipkin.endpoint}. */
    public String endpoint() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/api/v2/spans";
    }

    private void receive(HttpExchange exchange) throws IOException {
        try (exchange; InputStream body = exchange.getRequestBody()) {
            if (!"POST".equals(exchange.getRequestMethod())) {
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            List<Span> received;
            try {
                // Zipkin's senders gzip a body past a size, as Zipkin's collector accepts
                boolean gzipped = "gzip".equalsIgnoreCase(exchange.getRequestHeaders().getFirst("Content-Encoding"));
                received = parse(JSON.readTree((gzipped ? new GZIPInputStream(body) : body).readAllBytes()));
            }
            catch (RuntimeException | IOException notSpans) {
                synchronized (spans) {
                    refused.add(notSpans.toString());
                }
                exchange.sendResponseHeaders(400, -1);
                return;
            }
            synchronized (spans) {
                spans.addAll(received);
                spans.notifyAll();
            }
            exchange.sendResponseHeaders(202, -1);
        }
    }

    private static List<Span> parse(JsonNode list) {
        if (!list.isArray()) {
            throw new IllegalArgumentException("not a list of spans");
        }
        List<Span> parsed = new ArrayList<>();
        for (JsonNode span : list) {
            Map<String, String> tags = new LinkedHashMap<>();
            JsonNode tagNode = span.path("tags");
            tagNode.propertyNames().forEach(name -> tags.put(name, tagNode.get(name).asString()));
            parsed.add(new Span(required(span, "traceId"), optional(span, "parentId"), required(span, "id"), optional(span, "kind"),
                    Objects.requireNonNullElse(optional(span, "name"), ""), optional(span.path("localEndpoint"), "serviceName"), Map.copyOf(tags)));
        }
        return parsed;
    }

    private static String required(JsonNode node, String field) {
        String value = optional(node, field);
        if (value == null) {
            throw new IllegalArgumentException("a span without " + field);
        }
        return value;
    }

    private static String optional(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asString();
    }

    /** The spans of {@code traceId} received so far. */
    public List<Span> trace(String traceId) {
        synchronized (spans) {
            return spans.stream().filter(span -> span.traceId().equals(traceId)).toList();
        }
    }

    /** Every span received so far. */
    public List<Span> all() {
        synchronized (spans) {
            return List.copyOf(spans);
        }
    }

    /**
     * Waits, each delivery waking it, until the spans received satisfy {@code done}, for at most {@code bound}; fails
     * naming {@code what} and listing what did arrive.
     */
    public List<Span> await(Predicate<List<Span>> done, Duration bound, String what) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        synchronized (spans) {
            while (!done.test(List.copyOf(spans))) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("no " + what + " within " + bound + "; refused: " + refused + "; received: " + spans);
                }
                spans.wait(Math.max(1, left / 1_000_000));
            }
            return List.copyOf(spans);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
