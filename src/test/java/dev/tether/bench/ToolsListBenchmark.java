package dev.tether.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;


import dev.tether.testsupport.PackagedDaemon;

/**
 * {@code GET /api/tools} over a large stored catalog, and what the daemon costs to start and to keep: the
 * packaged jar on the embedded store, {@code connections} stdio fixture servers of {@code tools} tools each,
 * every catalog synced once; then the latency of the whole list, of one integration's and of a query (to the last
 * byte of the answer, the client's JSON parse timed apart), and start time and resident memory of a fresh daemon,
 * of this one, and of a restart over the stored catalogs.
 * Run it with {@code bench/tools-list.sh}.
 *
 * <p>Arguments: {@code connections=50 tools=100 samples=300}.
 */
public final class ToolsListBenchmark {


    private final int connections;
    private final int tools;
    private final int samples;

    private ToolsListBenchmark(BenchArguments args) {
        connections = args.integer("connections", 50);
        tools = args.integer("tools", 100);
        samples = args.integer("samples", 300);
    }

    public static void main(String[] argv) throws Exception {
        new ToolsListBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private void run() throws Exception {
        Path jar = PackagedDaemon.jar().orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package"));
        Path dataDir = Files.createTempDirectory("tether-bench-tools");
        System.out.printf("Tether tools-list benchmark: %d connections x %d tools, embedded store at %s%n", connections, tools, dataDir);

        try (PackagedDaemon daemon = PackagedDaemon.start(jar, dataDir, List.of(), Map.of())) {
            System.out.printf("start, empty store: %d ms to the first 200 of /api/health, RSS %.0f MiB, heap in use %.0f MiB%n",
                    daemon.startedIn().toMillis(), daemon.residentMiB(),
                    daemon.metrics().sum("jvm_memory_used_bytes", "area", "heap") / (1024 * 1024));
            long syncStart = System.nanoTime();
            BenchClient client = new BenchClient(daemon);
            List<String> slugs = client.addFixtureServers(connections, tools);
            System.out.printf("registered and synced %d servers in %d ms%n", slugs.size(), (System.nanoTime() - syncStart) / 1_000_000);

            // Executor's built-in tools are listed beside the stored ones, as Executor lists them.
            int builtins = client.send("GET", "/api/tools?integration=executor", null).size();
            int expected = connections * tools + builtins;
            latency(client, "GET /api/tools (all " + expected + " tools, " + builtins + " of them built in)", "/api/tools", expected);
            latency(client, "GET /api/tools?integration=<one> (" + tools + " tools)", "/api/tools?integration=" + slugs.get(0), tools);
            // The last generated tool: no other tool's name contains its name.
            String last = "tool_" + (tools - BenchClient.FIXTURE_TOOLS - 1);
            latency(client, "GET /api/tools?query=" + last + " (one per connection)", "/api/tools?query=" + last, connections);
            System.out.printf("after the load: RSS %.0f MiB, heap in use %.0f MiB%n", daemon.residentMiB(),
                    daemon.metrics().sum("jvm_memory_used_bytes", "area", "heap") / (1024 * 1024));
        }

        try (PackagedDaemon restarted = PackagedDaemon.start(jar, dataDir, List.of(), Map.of())) {
            System.out.printf("restart over %d stored tools: %d ms to the first 200 of /api/health, RSS %.0f MiB%n",
                    connections * tools, restarted.startedIn().toMillis(), restarted.residentMiB());
            long first = System.nanoTime();
            int listed = new BenchClient(restarted).send("GET", "/api/tools", null).size();
            System.out.printf("first GET /api/tools after the restart: %d tools in %d ms, %.0f servers started%n", listed,
                    (System.nanoTime() - first) / 1_000_000, restarted.metrics().spawned());
        }
    }

    /**
     * Timed from sending the request to the last byte of the answer; the client's JSON parse of the answer (which
     * checks its size) is timed apart, as it is the client's cost, not the daemon's.
     */
    private void latency(BenchClient client, String label, String path, int expected) throws Exception {
        for (int i = 0; i < 30; i++) {
            client.send("GET", path, null); // warm-up: JIT, caches, connection
        }
        List<Long> micros = new ArrayList<>();
        List<Long> parseMicros = new ArrayList<>();
        for (int i = 0; i < samples; i++) {
            long start = System.nanoTime();
            byte[] answer = client.get(path);
            long received = System.nanoTime();
            int size = BenchClient.JSON.readTree(answer).size();
            parseMicros.add((System.nanoTime() - received) / 1_000);
            micros.add((received - start) / 1_000);
            if (size != expected) {
                throw new IllegalStateException(path + " listed " + size + " tools, not " + expected);
            }
        }
        Collections.sort(micros);
        Collections.sort(parseMicros);
        System.out.printf("%s: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d samples); the client's JSON parse of it p50 %.1f ms%n", label,
                micros.get(micros.size() / 2) / 1000.0, micros.get((int) Math.ceil(micros.size() * 0.99) - 1) / 1000.0,
                micros.get(micros.size() - 1) / 1000.0, micros.size(), parseMicros.get(parseMicros.size() / 2) / 1000.0);
    }

}
