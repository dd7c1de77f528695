package dev.tether.bench;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;

/**
 * {@code GET /api/tools} over a large stored catalog, and what the daemon costs to start and to keep: the
 * packaged jar on the embedded store, {@code connections} stdio fixture servers of {@code tools} tools each,
 * every catalog synced once; then the latency of the whole list, of one integration's and of a query, and
 * start time and resident memory of a fresh daemon, of this one, and of a restart over the stored catalogs.
 * Run it with {@code bench/tools-list.sh}.
 *
 * <p>Arguments: {@code connections=50 tools=100 samples=300}.
 */
public final class ToolsListBenchmark {

    /** The fixture's own tools; {@code --tools=N} adds N generated ones. */
    private static final int FIXTURE_TOOLS = 5;
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final int connections;
    private final int tools;
    private final int samples;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

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
            List<String> slugs = registerAndSync(daemon);
            System.out.printf("registered and synced %d servers in %d ms%n", slugs.size(), (System.nanoTime() - syncStart) / 1_000_000);

            int expected = connections * tools;
            latency(daemon, "GET /api/tools (all " + expected + " tools)", "/api/tools", expected);
            latency(daemon, "GET /api/tools?integration=<one> (" + tools + " tools)", "/api/tools?integration=" + slugs.get(0), tools);
            latency(daemon, "GET /api/tools?query=tool_42 (one per connection)", "/api/tools?query=tool_42", connections);
            System.out.printf("after the load: RSS %.0f MiB, heap in use %.0f MiB%n", daemon.residentMiB(),
                    daemon.metrics().sum("jvm_memory_used_bytes", "area", "heap") / (1024 * 1024));
        }

        try (PackagedDaemon restarted = PackagedDaemon.start(jar, dataDir, List.of(), Map.of())) {
            System.out.printf("restart over %d stored tools: %d ms to the first 200 of /api/health, RSS %.0f MiB%n",
                    connections * tools, restarted.startedIn().toMillis(), restarted.residentMiB());
            long first = System.nanoTime();
            int listed = get(restarted, "/api/tools").size();
            System.out.printf("first GET /api/tools after the restart: %d tools in %d ms, %.0f servers started%n", listed,
                    (System.nanoTime() - first) / 1_000_000, restarted.metrics().spawned());
        }
    }

    private List<String> registerAndSync(PackagedDaemon daemon) throws Exception {
        List<String> slugs = new ArrayList<>();
        List<String> command = Fixture.command("--tools=" + (tools - FIXTURE_TOOLS));
        for (int i = 0; i < connections; i++) {
            String slug = "bench_" + i;
            send(daemon, "POST", "/api/mcp/servers", Map.of("transport", "stdio", "name", "Bench " + i, "slug", slug,
                    "command", command.get(0), "args", command.subList(1, command.size())));
            send(daemon, "POST", "/api/connections", Map.of("owner", "org", "name", "default", "integration", slug,
                    "template", "none", "values", Map.of()));
            int synced = send(daemon, "POST", "/api/connections/org/" + slug + "/default/refresh", null).size();
            if (synced != tools) {
                throw new IllegalStateException(slug + " synced " + synced + " tools, not " + tools);
            }
            slugs.add(slug);
        }
        return slugs;
    }

    private void latency(PackagedDaemon daemon, String label, String path, int expected) throws Exception {
        for (int i = 0; i < 30; i++) {
            get(daemon, path); // warm-up: JIT, caches, connection
        }
        List<Long> micros = new ArrayList<>();
        int size = 0;
        for (int i = 0; i < samples; i++) {
            long start = System.nanoTime();
            size = get(daemon, path).size();
            micros.add((System.nanoTime() - start) / 1_000);
        }
        if (size != expected) {
            throw new IllegalStateException(path + " listed " + size + " tools, not " + expected);
        }
        Collections.sort(micros);
        System.out.printf("%s: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d samples)%n", label, micros.get(micros.size() / 2) / 1000.0,
                micros.get((int) Math.ceil(micros.size() * 0.99) - 1) / 1000.0, micros.get(micros.size() - 1) / 1000.0, micros.size());
    }

    private JsonNode get(PackagedDaemon daemon, String path) throws Exception {
        return send(daemon, "GET", path, null);
    }

    private JsonNode send(PackagedDaemon daemon, String method, String path, Object body) throws Exception {
        HttpRequest request = daemon.request(path)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                .build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException(method + " " + path + ": " + response.statusCode() + " " + response.body());
        }
        return JSON.readTree(response.body());
    }
}
