package dev.tether.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import tools.jackson.databind.JsonNode;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;

/**
 * What {@code POST /api/executions} costs on the packaged daemon: the first execution (which builds the GraalJS
 * engine), the latency of {@code return 1}, of code that calls nothing and of code that calls one tool, beside the same
 * call through {@code POST /api/tools/call}; executions per second from 1 and from 8 clients; memory bombs (how long
 * each takes to end, 100,000 calls parked behind an approval among them, resident memory before and after); the jar's
 * size; the load average, since the figures depend on what else the host runs. Then what durable executions cost: the
 * journal's share of {@code return 1} and of one tool call (p50, p99), beside a daemon in the same run with
 * {@code tether.execution.durable=false} (the path with no journal at all), measured in alternating blocks so that
 * both see the same load; and the time to rebuild a paused execution with 20 recorded calls after a restart, beside
 * resuming the same pause on its live context. Run it with {@code bench/executions.sh}.
 *
 * <p>Arguments: {@code samples=200 seconds=10 rebuilds=20}.
 */
public final class ExecutionsBenchmark {


    /** Twenty calls, twelve of them four at a time, reading the clock and randomness, then one that waits for approval. */
    private static final String TWENTY_CALLS = """
            let previous = '';
            const step = async (i) => {
              const answer = await tools.bench.org.default.echo({ text: JSON.stringify({ i, now: Date.now(), r: Math.random(), previous }) });
              return answer.data.content[0].text;
            };
            for (let i = 0; i < 8; i++) previous = await step(i);
            for (let round = 0; round < 3; round++) previous = (await Promise.all([0, 1, 2, 3].map((k) => step(8 + 4 * round + k)))).join('|').length;
            await tools.bench.org.default.delete_everything({});
            return previous;
            """;

    private final int samples;
    private final int seconds;
    private final int rebuilds;

    private ExecutionsBenchmark(BenchArguments args) {
        samples = args.integer("samples", 200);
        seconds = args.integer("seconds", 10);
        rebuilds = args.integer("rebuilds", 20);
    }

    public static void main(String[] argv) throws Exception {
        new ExecutionsBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private void run() throws Exception {
        Path jar = PackagedDaemon.jar().orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package"));
        Path dataDir = Files.createTempDirectory("tether-bench-executions");
        System.out.printf("Tether executions benchmark (client on Java %d), %d samples; jar %.1f MB; load average %s%n",
                Runtime.version().feature(), samples, Files.size(jar) / 1e6, Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
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

            latency("execution `return 1`", () -> execute(client, "return 1"));
            latency("execution, no tool call", () -> execute(client, "return [1, 2, 3].map(x => x * 2)"));
            latency("execution, one tool call", () -> execute(client, "return await tools.bench.org.default.echo({text: 'hi'})"));
            latency("POST /api/tools/call, the same call", () -> client.post("/api/tools/call",
                    Map.of("address", "tools.bench.org.default.echo", "args", Map.of("text", "hi"))));
            System.out.printf("RSS after the load: %.0f MiB%n", daemon.residentMiB());
            throughput(client, 1);
            throughput(client, 8);
            bombs(client, daemon);
        }
        journalCost(jar);
        rebuildTime(jar);
        System.out.printf("load average at the end: %s%n", Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    }

    /**
     * The journal's share of the live path: the same executions on a daemon that journals (the default) and on one that
     * does not ({@code tether.execution.durable=false}), in alternating blocks of 20, so that both meet the same load.
     */
    private void journalCost(Path jar) throws Exception {
        try (PackagedDaemon durable = PackagedDaemon.start(jar, Files.createTempDirectory("tether-bench-durable"), List.of(), Map.of());
                PackagedDaemon volatileOnly = PackagedDaemon.start(jar, Files.createTempDirectory("tether-bench-volatile"),
                        List.of("--tether.execution.durable=false"), Map.of())) {
            BenchClient journalled = new BenchClient(durable);
            BenchClient plain = new BenchClient(volatileOnly);
            for (BenchClient client : List.of(journalled, plain)) {
                client.addStdioServer("bench", Fixture.command());
                client.refresh("bench");
            }
            for (String code : List.of("return 1", "return await tools.bench.org.default.echo({text: 'hi'})")) {
                List<Long> with = new ArrayList<>();
                List<Long> without = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    execute(journalled, code);
                    execute(plain, code);
                }
                for (int block = 0; block < Math.max(1, samples / 20); block++) {
                    for (int i = 0; i < 20; i++) {
                        with.add(timed(() -> execute(journalled, code)));
                    }
                    for (int i = 0; i < 20; i++) {
                        without.add(timed(() -> execute(plain, code)));
                    }
                }
                Collections.sort(with);
                Collections.sort(without);
                System.out.printf("journal's cost on `%s`: p50 %.2f ms with, %.2f ms without (%+.1f %%); p99 %.2f ms with, %.2f ms without (%+.1f %%)%n",
                        code, p(with, 0.5), p(without, 0.5), 100 * (p(with, 0.5) / p(without, 0.5) - 1),
                        p(with, 0.99), p(without, 0.99), 100 * (p(with, 0.99) / p(without, 0.99) - 1));
            }
        }
    }

    /**
     * Pauses with 20 recorded calls: resumed on their live context, and resumed after an orderly restart, rebuilt from
     * their journal by replay (the approved call included in both).
     */
    private void rebuildTime(Path jar) throws Exception {
        Path dataDir = Files.createTempDirectory("tether-bench-rebuild");
        List<Long> live = new ArrayList<>();
        List<String> pauses = new ArrayList<>();
        try (PackagedDaemon daemon = PackagedDaemon.start(jar, dataDir, List.of(), Map.of())) {
            BenchClient client = new BenchClient(daemon);
            client.addStdioServer("bench", Fixture.command());
            client.refresh("bench");
            for (int i = 0; i < 5; i++) {
                resume(client, pause(client));
            }
            for (int i = 0; i < rebuilds; i++) {
                String id = pause(client);
                live.add(timed(() -> resume(client, id)));
            }
            for (int i = 0; i < rebuilds + 5; i++) {
                pauses.add(pause(client));
            }
        }
        List<Long> rebuilt = new ArrayList<>();
        try (PackagedDaemon restarted = PackagedDaemon.start(jar, dataDir, List.of(), Map.of())) {
            BenchClient client = new BenchClient(restarted);
            for (String id : pauses.subList(0, 5)) {
                resume(client, id); // the first builds the JavaScript engine and warms the connection's session
            }
            for (String id : pauses.subList(5, pauses.size())) {
                rebuilt.add(timed(() -> resume(client, id)));
            }
        }
        Collections.sort(live);
        Collections.sort(rebuilt);
        System.out.printf("resume of a pause with 20 recorded calls: live context p50 %.1f ms, p99 %.1f ms; rebuilt by replay after a "
                + "restart p50 %.1f ms, p99 %.1f ms (the rebuild: %.1f ms at p50)%n", p(live, 0.5), p(live, 0.99), p(rebuilt, 0.5),
                p(rebuilt, 0.99), p(rebuilt, 0.5) - p(live, 0.5));
    }

    private static String pause(BenchClient client) throws Exception {
        JsonNode paused = client.post("/api/executions", Map.of("code", TWENTY_CALLS));
        if (!"paused".equals(paused.path("status").asString())) {
            throw new IllegalStateException("the execution did not pause: " + paused);
        }
        return paused.path("structured").path("executionId").asString();
    }

    private static JsonNode resume(BenchClient client, String id) throws Exception {
        JsonNode done = client.post("/api/executions/" + id + "/resume", Map.of("action", "accept"));
        if (!"completed".equals(done.path("status").asString()) || done.path("isError").asBoolean()) {
            throw new IllegalStateException("the resume did not complete: " + done);
        }
        return done;
    }

    private static long timed(Step step) throws Exception {
        long start = System.nanoTime();
        step.run();
        return (System.nanoTime() - start) / 1_000;
    }

    /** The {@code q} quantile of sorted microseconds, in ms. */
    private static double p(List<Long> sortedMicros, double q) {
        return sortedMicros.get(Math.min(sortedMicros.size() - 1, (int) Math.ceil(sortedMicros.size() * q) - 1)) / 1000.0;
    }

    /** {@code return 1} from {@code clients} clients at once, each sending its next as soon as the last is answered. */
    private void throughput(BenchClient client, int clients) throws Exception {
        AtomicLong done = new AtomicLong();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        ExecutorService threads = Executors.newFixedThreadPool(clients);
        List<Future<?>> running = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            running.add(threads.submit(() -> {
                while (System.nanoTime() < end) {
                    execute(client, "return 1");
                    done.incrementAndGet();
                }
                return null;
            }));
        }
        for (Future<?> future : running) {
            future.get();
        }
        threads.shutdown();
        System.out.printf("executions per second, %d client%s: %.0f%n", clients, clients == 1 ? "" : "s", done.get() / (double) seconds);
    }

    /** Code that would fill the heap: how long until it ends with an error, and the resident memory around. */
    private void bombs(BenchClient client, PackagedDaemon daemon) throws Exception {
        System.out.printf("RSS before the bombs: %.0f MiB%n", daemon.residentMiB());
        for (String code : List.of("const a = []; while (true) a.push(new Array(1000).fill(7));",
                "let s = 'xy'; while (true) s = s + s;",
                "const a = []; while (true) a.push({n: a.length, s: 'x' + a.length});")) {
            long start = System.nanoTime();
            JsonNode answer = client.post("/api/executions", Map.of("code", code));
            System.out.printf("bomb `%s`: %d ms, %s; RSS %.0f MiB%n", code, (System.nanoTime() - start) / 1_000_000,
                    answer.path("structured").path("error").asString(), daemon.residentMiB());
        }
        long start = System.nanoTime();
        ExecutorService threads = Executors.newFixedThreadPool(3);
        List<Future<JsonNode>> three = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            three.add(threads.submit(() -> client.post("/api/executions", Map.of("code", "const a = []; while (true) a.push(new Array(1000).fill(1));"))));
        }
        for (Future<JsonNode> bomb : three) {
            bomb.get();
        }
        threads.shutdown();
        System.out.printf("three array pushers at once: %d ms; RSS %.0f MiB%n", (System.nanoTime() - start) / 1_000_000, daemon.residentMiB());
        client.post("/api/policies", Map.of("owner", "org", "pattern", "bench.*", "action", "require_approval"));
        start = System.nanoTime();
        JsonNode parked = client.post("/api/executions", Map.of("code", "for (let i = 0; i < 100000; i++) "
                + "tools.bench.org.default.echo({text: 'x' + i}).catch(() => {}); await null; return 'never'"));
        System.out.printf("100,000 calls parked behind an approval: %d ms, %s; RSS %.0f MiB%n", (System.nanoTime() - start) / 1_000_000,
                parked.path("structured").path("error").asString(), daemon.residentMiB());
        Thread.sleep(5000);
        System.out.printf("RSS 5 s after the bombs: %.0f MiB%n", daemon.residentMiB());
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
