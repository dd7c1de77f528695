package dev.tether.bench;

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
        try (RawStdioServer raw = RawStdioServer.start(everything)) {
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
                Sequence health = sequential(client, daemon, "POST", "/api/connections/org/everything/default/health", null);
                rows.add(new String[] { "warm POST …/health p50 / p99", ms(health.latencies().p50()) + " / " + ms(health.latencies().p99()),
                        "ping " + ms(rawPing.p50()) + " / " + ms(rawPing.p99()), ratio(health.latencies().p50(), rawPing.p50()),
                        perRequest(health.daemonCpu(), samples) });
                // The same client and server with no child behind: what HTTP alone costs, to read the rest against.
                Sequence floor = sequential(client, daemon, "GET", "/api/health", null);
                rows.add(new String[] { "GET /api/health (no child: the HTTP floor) p50 / p99",
                        ms(floor.latencies().p50()) + " / " + ms(floor.latencies().p99()), "", "", perRequest(floor.daemonCpu(), samples) });
            }

            for (int clients : figures.contains("calls") ? new int[] { 1, 8, 32 } : new int[0]) {
                Load load = concurrent(client, daemon, clients, echo);
                rows.add(new String[] { "POST /api/tools/call echo, " + clients + " client" + (clients == 1 ? "" : "s"),
                        String.format("%.0f/s, p50 %s, %d errors", load.rate(), ms(load.latencies().p50()), load.errors()),
                        "echo p50 " + ms(rawEcho.p50()), ratio(load.latencies().p50(), rawEcho.p50()),
                        perRequest(load.daemonCpu(), load.latencies().micros().size() + load.errors()) });
            }
            System.out.printf("after the load: RSS %.0f MiB%n", daemon.residentMiB());
        }

        if (figures.contains("tools")) {
            try (PackagedDaemon daemon = PackagedDaemon.start(jar, Files.createTempDirectory("tether-bench-hotpath-tools"), List.of(), Map.of())) {
                BenchClient client = new BenchClient(daemon);
                client.addFixtureServers(connections, tools);
                Latencies list = sequential(client, daemon, "GET", "/api/tools", null).latencies();
                rows.add(new String[] { "GET /api/tools, " + connections * tools + " stored tools",
                        "p50 " + ms(list.p50()) + ", p99 " + ms(list.p99()), "", "", "" });
            }
        }

        System.out.println();
        System.out.printf("load average %s%n", Machine.loadAverage());
        System.out.println("| figure | Tether | raw stdio, same run | ratio | daemon CPU per request, JIT aside |");
        System.out.println("|---|---|---|---|---|");
        rows.forEach(row -> System.out.printf("| %s | %s | %s | %s | %s |%n", (Object[]) row));
    }

    private static String ms(double millis) {
        return String.format("%.2f ms", millis);
    }

    /**
     * The CPU the daemon's threads have used so far, but for the JIT's compiler threads: on a machine shared with other
     * work C2 goes on compiling for minutes, and its share says nothing about the request path.
     */
    private static Duration requestCpu(PackagedDaemon daemon) {
        return daemon.cpuTimeByThreadName().entrySet().stream().filter(thread -> !thread.getKey().contains("CompilerThre"))
                .map(Map.Entry::getValue).reduce(Duration.ZERO, Duration::plus);
    }

    /**
     * The daemon's CPU (its threads but the JIT's, from {@code /proc}) per request: on a shared machine the steadier figure,
     * since a request that waits for a core takes longer but costs the same.
     */
    private static String perRequest(Duration cpu, int requests) {
        return requests == 0 ? "" : String.format("%.0f µs", cpu.toNanos() / 1e3 / requests);
    }

    private static String ratio(double tether, double raw) {
        return String.format("%.1f×", tether / raw);
    }

    private Sequence sequential(BenchClient client, PackagedDaemon daemon, String method, String path, Object body) throws Exception {
        // Warmed up as long as the loads are: JIT, caches, the connection.
        long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < warm) {
            client.send(method, path, body);
        }
        List<Long> micros = new ArrayList<>();
        Duration cpu = requestCpu(daemon);
        for (int i = 0; i < samples; i++) {
            long start = System.nanoTime();
            client.send(method, path, body);
            micros.add((System.nanoTime() - start) / 1_000);
        }
        return new Sequence(Latencies.of(micros), requestCpu(daemon).minus(cpu));
    }

    private record Sequence(Latencies latencies, Duration daemonCpu) {
    }

    /** {@code clients} calling back to back for {@code seconds}, after a warm-up of the same length, and the daemon's CPU meanwhile. */
    private Load concurrent(BenchClient client, PackagedDaemon daemon, int clients, Object body) throws Exception {
        byte[] payload = BenchClient.JSON.writeValueAsBytes(body);
        CallLoad.run(client, clients, Duration.ofSeconds(seconds), any -> payload);
        Duration cpu = requestCpu(daemon);
        CallLoad load = CallLoad.run(client, clients, Duration.ofSeconds(seconds), any -> payload);
        return new Load(load.rate(), load.latencies(), load.errors(), requestCpu(daemon).minus(cpu));
    }

    private record Load(double rate, Latencies latencies, int errors, Duration daemonCpu) {
    }
}
