package dev.tether.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.TestImages;

/**
 * The hot path of the packaged daemon against the raw limit of the same server: server-everything in one
 * {@code docker run -i --rm}, reached through Tether over HTTP (keep-alive) and, in the same run, directly over
 * the stdio of its own container with JSON-RPC. Prints warm health checks, tool calls from 1, 8 and 32
 * concurrent clients on one connection, and {@code GET /api/tools} over a large stored catalog, each beside
 * the raw figure and their ratio. Run it with {@code bench/hotpath.sh}.
 *
 * <p>Arguments: {@code samples=500 seconds=5 warmup=30 connections=50 tools=100 figures=health,calls,tools}.
 */
public final class HotPathBenchmark {


    private final int samples;
    private final int seconds;
    /** Seconds of health checks and tool calls before the first figure, for the JIT's second tier to settle. */
    private final int warmup;
    private final int connections;
    private final int tools;
    /** Which figures to measure, for a quicker run while working on one of them: health, calls, tools. */
    private final Set<String> figures;
    private final List<String[]> rows = new ArrayList<>();

    private HotPathBenchmark(BenchArguments args) {
        samples = args.integer("samples", 500);
        seconds = args.integer("seconds", 5);
        warmup = args.integer("warmup", 30);
        connections = args.integer("connections", 50);
        tools = args.integer("tools", 100);
        figures = Set.of(args.text("figures", "health,calls,tools").split(","));
    }

    public static void main(String[] argv) throws Exception {
        new HotPathBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private void run() throws Exception {
        Path jar = PackagedDaemon.jar().orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package"));
        List<String> everything = Fixture.everythingDockerCommand(); // builds the test image when missing
        Path dataDir = Files.createTempDirectory("tether-bench-hotpath");
        System.out.printf("Tether hot-path benchmark: %s, %d cores, java %s%n", TestImages.NODE_IMAGE,
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));

        Latencies rawPing;
        Latencies rawEcho;
        try (RawServer raw = RawServer.start(everything)) {
            rawPing = raw.measure("ping", "{}", samples);
            rawEcho = raw.measure("tools/call", "{\"name\":\"echo\",\"arguments\":{\"message\":\"hot path\"}}", samples);
        }
        System.out.printf("raw JSON-RPC over the container's stdio: ping p50 %.2f ms p99 %.2f ms; tools/call echo p50 %.2f ms%n",
                rawPing.p50(), rawPing.p99(), rawEcho.p50());

        try (PackagedDaemon daemon = PackagedDaemon.start(jar, dataDir, List.of(), Map.of())) {
            BenchClient client = new BenchClient(daemon);
            client.addStdioServer("everything", everything);
            client.refresh("everything");
            // A daemon runs for hours: its figures are those of code C2 has compiled, which takes this long here.
            Map<String, Object> echo = Map.of("address", "tools.everything.org.default.echo", "args", Map.of("message", "hot path"));
            long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(warmup);
            while (System.nanoTime() < warm) {
                client.send("POST", "/api/connections/org/everything/default/health", null);
                client.send("POST", "/api/tools/call", echo);
            }

            if (figures.contains("health")) {
                Latencies health = sequential(client, "POST", "/api/connections/org/everything/default/health", null);
                rows.add(new String[] { "warm POST …/health p50 / p99", ms(health.p50()) + " / " + ms(health.p99()),
                        "ping " + ms(rawPing.p50()) + " / " + ms(rawPing.p99()), ratio(health.p50(), rawPing.p50()) });
                // The same client and server with no child behind: what HTTP alone costs, to read the rest against.
                Latencies floor = sequential(client, "GET", "/api/health", null);
                rows.add(new String[] { "GET /api/health (no child: the HTTP floor) p50 / p99", ms(floor.p50()) + " / " + ms(floor.p99()),
                        "", "" });
            }

            for (int clients : figures.contains("calls") ? new int[] { 1, 8, 32 } : new int[0]) {
                CallLoad load = concurrent(client, clients, echo);
                rows.add(new String[] { "POST /api/tools/call echo, " + clients + " client" + (clients == 1 ? "" : "s"),
                        String.format("%.0f/s, p50 %s, %d errors", load.rate(), ms(load.latencies().p50()), load.errors()),
                        "echo p50 " + ms(rawEcho.p50()), ratio(load.latencies().p50(), rawEcho.p50()) });
            }
            System.out.printf("after the load: RSS %.0f MiB%n", daemon.residentMiB());
        }

        if (figures.contains("tools")) {
            try (PackagedDaemon daemon = PackagedDaemon.start(jar, Files.createTempDirectory("tether-bench-hotpath-tools"), List.of(), Map.of())) {
                BenchClient client = new BenchClient(daemon);
                client.addFixtureServers(connections, tools);
                Latencies list = sequential(client, "GET", "/api/tools", null);
                rows.add(new String[] { "GET /api/tools, " + connections * tools + " stored tools",
                        "p50 " + ms(list.p50()) + ", p99 " + ms(list.p99()), "", "" });
            }
        }

        System.out.println();
        System.out.println("| figure | Tether | raw stdio, same run | ratio |");
        System.out.println("|---|---|---|---|");
        rows.forEach(row -> System.out.printf("| %s | %s | %s | %s |%n", (Object[]) row));
    }

    private static String ms(double millis) {
        return String.format("%.2f ms", millis);
    }

    private static String ratio(double tether, double raw) {
        return String.format("%.1f×", tether / raw);
    }

    private Latencies sequential(BenchClient client, String method, String path, Object body) throws Exception {
        // Warmed up as long as the loads are: JIT, caches, the connection.
        long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < warm) {
            client.send(method, path, body);
        }
        List<Long> micros = new ArrayList<>();
        for (int i = 0; i < samples; i++) {
            long start = System.nanoTime();
            client.send(method, path, body);
            micros.add((System.nanoTime() - start) / 1_000);
        }
        return Latencies.of(micros);
    }

    /** {@code clients} calling back to back for {@code seconds}, after a warm-up of the same length. */
    private CallLoad concurrent(BenchClient client, int clients, Object body) throws Exception {
        byte[] payload = BenchClient.JSON.writeValueAsBytes(body);
        CallLoad.run(client, clients, Duration.ofSeconds(seconds), any -> payload);
        return CallLoad.run(client, clients, Duration.ofSeconds(seconds), any -> payload);
    }

    /** server-everything in a container of its own, spoken to directly: the floor under every Tether figure. */
    private static final class RawServer implements AutoCloseable {

        private final Process process;
        private final OutputStream in;
        private final BufferedReader out;
        private int ids;

        private RawServer(Process process) {
            this.process = process;
            this.in = process.getOutputStream();
            this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        }

        static RawServer start(List<String> command) throws IOException {
            RawServer raw = new RawServer(new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start());
            raw.call("initialize", "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                    + "\"clientInfo\":{\"name\":\"hotpath-bench\",\"version\":\"1\"}}");
            raw.write("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
            return raw;
        }

        Latencies measure(String method, String params, int samples) throws IOException {
            for (int i = 0; i < Math.max(50, samples / 5); i++) {
                call(method, params);
            }
            List<Long> micros = new ArrayList<>();
            for (int i = 0; i < samples; i++) {
                long start = System.nanoTime();
                call(method, params);
                micros.add((System.nanoTime() - start) / 1_000);
            }
            return Latencies.of(micros);
        }

        /** Sends a request and reads lines until its answer; notifications in between are skipped. */
        private void call(String method, String params) throws IOException {
            int id = ++ids;
            write("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"" + method + "\",\"params\":" + params + "}");
            String marker = "\"id\":" + id + ",";
            String markerEnd = "\"id\":" + id + "}";
            String line;
            while ((line = out.readLine()) != null) {
                if (line.contains(marker) || line.contains(markerEnd)) {
                    return;
                }
            }
            throw new IOException("server-everything closed its stdout");
        }

        private void write(String line) throws IOException {
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        }

        @Override
        public void close() throws InterruptedException {
            try {
                in.close();
            }
            catch (IOException ignored) {
                // gone already
            }
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
