package dev.tether.bench;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;

/**
 * {@code tools/call} through {@code /mcp/tools} in both MCP eras, on one warm connection to the plain fixture server
 * (a node child, no container): the handshake era (2025-11-25: {@code initialize} once per client, then calls under its
 * {@code Mcp-Session-Id}) and the stateless era (2026-07-28: every call self-describing, {@code _meta} and the routing
 * headers), each from 1 and 8 clients over keep-alive HTTP, beside {@code POST /api/tools/call} of the same tool in the
 * same run (the REST route, no MCP framing: the floor the two eras are read against). Prints calls per second, p50 and
 * errors.
 * Usage: bench/mcp-eras.sh [seconds=5] [warmup=20]
 */
public final class McpErasBenchmark {

    private static final String TOOL = "tools.fixture.org.default.echo";
    private static final String MODERN = "2026-07-28";

    private final int seconds;
    private final int warmup;

    private McpErasBenchmark(BenchArguments args) {
        seconds = args.integer("seconds", 5);
        warmup = args.integer("warmup", 20);
    }

    public static void main(String[] argv) throws Exception {
        new McpErasBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private void run() throws Exception {
        Path jar = PackagedDaemon.jar().orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package"));
        System.out.printf("Tether MCP eras benchmark: %d cores, java %s%n", Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"));
        List<String[]> rows = new ArrayList<>();
        try (PackagedDaemon daemon = PackagedDaemon.start(jar, Files.createTempDirectory("tether-bench-eras"), List.of(), Map.of())) {
            BenchClient client = new BenchClient(daemon);
            client.addStdioServer("fixture", Fixture.command());
            client.post("/api/connections/org/fixture/default/refresh", null);
            byte[] rest = BenchClient.JSON.writeValueAsBytes(Map.of("address", TOOL, "args", Map.of("text", "eras")));
            long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(warmup);
            while (System.nanoTime() < warm) {
                CallLoad.requests(client, 2, Duration.ofSeconds(1), c -> handshake(client));
                CallLoad.requests(client, 2, Duration.ofSeconds(1), c -> stateless(client));
                CallLoad.run(client, 2, Duration.ofSeconds(1), c -> rest);
            }
            for (int clients : new int[] { 1, 8 }) {
                List<Supplier<HttpRequest>> sessions = new ArrayList<>();
                for (int c = 0; c < clients; c++) {
                    sessions.add(handshake(client));
                }
                rows.add(row("2025-11-25 (session), " + clients, CallLoad.requests(client, clients, Duration.ofSeconds(seconds), sessions::get)));
                rows.add(row("2026-07-28 (stateless), " + clients, CallLoad.requests(client, clients, Duration.ofSeconds(seconds),
                        c -> stateless(client))));
                rows.add(row("POST /api/tools/call (no MCP), " + clients, CallLoad.run(client, clients, Duration.ofSeconds(seconds),
                        c -> rest)));
            }
        }
        System.out.println();
        System.out.println("| tools/call echo through | calls/s | p50 | errors |");
        System.out.println("|---|---|---|---|");
        rows.forEach(row -> System.out.printf("| %s | %s | %s | %s |%n", (Object[]) row));
    }

    private static String[] row(String what, CallLoad load) {
        return new String[] { what + (what.endsWith(", 1") ? " client" : " clients"), String.format("%.0f", load.rate()),
                String.format("%.2f ms", load.latencies().p50()), String.valueOf(load.errors()) };
    }

    /** An agent of the handshake era: {@code initialize} and {@code notifications/initialized} once, then its calls. */
    private static Supplier<HttpRequest> handshake(BenchClient client) {
        try {
            HttpResponse<String> opened = client.http().send(mcp(client).POST(body(Map.of("jsonrpc", "2.0", "id", 0,
                    "method", "initialize", "params", Map.of("protocolVersion", "2025-11-25", "capabilities", Map.of(),
                            "clientInfo", Map.of("name", "bench", "version", "1"))))).build(), HttpResponse.BodyHandlers.ofString());
            String session = opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
            client.http().send(mcp(client).header("Mcp-Session-Id", session).header("MCP-Protocol-Version", "2025-11-25")
                    .POST(body(Map.of("jsonrpc", "2.0", "method", "notifications/initialized"))).build(), HttpResponse.BodyHandlers.ofString());
            HttpRequest.BodyPublisher call = body(Map.of("jsonrpc", "2.0", "id", 1, "method", "tools/call",
                    "params", Map.of("name", TOOL, "arguments", Map.of("text", "eras"))));
            return () -> mcp(client).header("Mcp-Session-Id", session).header("MCP-Protocol-Version", "2025-11-25").POST(call).build();
        } catch (Exception failed) {
            throw new IllegalStateException("initialize failed", failed);
        }
    }

    /** An agent of MCP 2026-07-28: every call carries its version and capabilities, and the routing headers. */
    private static Supplier<HttpRequest> stateless(BenchClient client) {
        HttpRequest.BodyPublisher call = body(Map.of("jsonrpc", "2.0", "id", 1, "method", "tools/call", "params", Map.of(
                "name", TOOL, "arguments", Map.of("text", "eras"), "_meta", Map.of("io.modelcontextprotocol/protocolVersion", MODERN,
                        "io.modelcontextprotocol/clientCapabilities", Map.of(),
                        "io.modelcontextprotocol/clientInfo", Map.of("name", "bench", "version", "1")))));
        return () -> mcp(client).header("Mcp-Method", "tools/call").header("Mcp-Name", TOOL).header("MCP-Protocol-Version", MODERN)
                .POST(call).build();
    }

    private static HttpRequest.Builder mcp(BenchClient client) {
        return client.request("/mcp/tools").header("Accept", "application/json, text/event-stream");
    }

    private static HttpRequest.BodyPublisher body(Object json) {
        return HttpRequest.BodyPublishers.ofByteArray(BenchClient.JSON.writeValueAsBytes(json));
    }

}
