package dev.tether.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.JsonNode;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;

/**
 * What {@code POST /api/executions} costs on the packaged daemon: the first execution (which builds the GraalJS
 * engine), the latency of code that calls nothing and of code that calls one tool, beside the same call through
 * {@code POST /api/tools/call}, and resident memory before and after. Run it with {@code bench/executions.sh}.
 *
 * <p>Arguments: {@code samples=200}.
 */
public final class ExecutionsBenchmark {


    private final int samples;

    private ExecutionsBenchmark(BenchArguments args) {
        samples = args.integer("samples", 200);
    }

    public static void main(String[] argv) throws Exception {
        new ExecutionsBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private void run() throws Exception {
        Path jar = PackagedDaemon.jar().orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package"));
        Path dataDir = Files.createTempDirectory("tether-bench-executions");
        System.out.printf("Tether executions benchmark on Java %d, %d samples%n", Runtime.version().feature(), samples);
        try (PackagedDaemon daemon = PackagedDaemon.start(jar, dataDir, List.of(), Map.of())) {
            System.out.printf("started in %d ms, RSS %.0f MiB before any execution%n", daemon.startedIn().toMillis(), daemon.residentMiB());
            BenchClient client = new BenchClient(daemon);
            client.addStdioServer("bench", Fixture.command());
            client.refresh("bench");

            long first = System.nanoTime();
            JsonNode answer = execute(client, "return 1");
            System.out.printf("first execution (builds the engine): %d ms, answer %s%n", (System.nanoTime() - first) / 1_000_000,
                    answer.path("text").asString());
            System.out.printf("RSS after the first execution: %.0f MiB%n", daemon.residentMiB());

            latency("execution, no tool call", () -> execute(client, "return [1, 2, 3].map(x => x * 2)"));
            latency("execution, one tool call", () -> execute(client, "return await tools.bench.org.default.echo({text: 'hi'})"));
            latency("POST /api/tools/call, the same call", () -> client.post("/api/tools/call",
                    Map.of("address", "tools.bench.org.default.echo", "args", Map.of("text", "hi"))));
            System.out.printf("RSS after the load: %.0f MiB%n", daemon.residentMiB());
        }
    }

    private interface Step {
        JsonNode run() throws Exception;
    }

    private void latency(String label, Step step) throws Exception {
        for (int i = 0; i < 20; i++) {
            step.run();
        }
        List<Long> micros = new ArrayList<>();
        for (int i = 0; i < samples; i++) {
            long start = System.nanoTime();
            step.run();
            micros.add((System.nanoTime() - start) / 1_000);
        }
        Collections.sort(micros);
        System.out.printf("%s: p50 %.1f ms, p99 %.1f ms, max %.1f ms%n", label, micros.get(micros.size() / 2) / 1000.0,
                micros.get((int) Math.ceil(micros.size() * 0.99) - 1) / 1000.0, micros.get(micros.size() - 1) / 1000.0);
    }

    private JsonNode execute(BenchClient client, String code) throws Exception {
        JsonNode answer = client.post("/api/executions", Map.of("code", code));
        if (answer.path("isError").asBoolean()) {
            throw new IllegalStateException("the execution failed: " + answer);
        }
        return answer;
    }

}
