package dev.tether.bench;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;

/**
 * Two builds of the daemon compared on a warm tool call, in one run: for each jar in turn ({@code rounds} times,
 * alternating), the packaged daemon with one stdio server, warmed up, then {@code tools/call echo} through
 * {@code /mcp/tools} (an MCP session, as {@code bench/peers.sh} calls it) and through {@code POST /api/tools/call},
 * one client back to back and {@code clients} at once, beside {@code GET /api/health} (the HTTP floor). For each: p50,
 * calls per second, the daemon's CPU per call (its threads but the JIT's compiler threads, from {@code /proc}) and the
 * bytes it allocated per call (its {@code ThreadMXBean} over JMX). On a shared machine the last two are the figures to
 * judge a change by: a call that waits for a core takes longer, not more CPU or memory.
 *
 * <p>Arguments: {@code jars=<jar>[,<jar>...]} (default: the one in {@code target/}), {@code rounds=2},
 * {@code warmup=60} seconds, {@code samples=2000} sequential calls per figure, {@code seconds=8} for the concurrent
 * figure, {@code clients=8}, {@code server=everything} (server-everything in {@code docker run -i --rm}) or
 * {@code fixture} (the plain node fixture server, no container), and optionally {@code profiler=<libasyncProfiler.so>}
 * {@code profile=cpu,alloc} {@code profile-clients=1}: a further {@code /mcp/tools} run from that many clients under
 * async-profiler.
 */
public final class CallPathBenchmark {

    private final List<Path> jars;
    private final int rounds;
    private final int warmup;
    private final int samples;
    private final int seconds;
    private final int clients;
    private final String server;
    /** async-profiler's library and the events to profile a further {@code /mcp/tools} run with, if given, and its clients. */
    private final String profiler;
    private final List<String> profiles;
    private final int profileClients;
    /** Per jar, per figure, one row per round. */
    private final Map<String, Map<String, List<Figure>>> figures = new LinkedHashMap<>();

    private CallPathBenchmark(BenchArguments args) {
        String given = args.text("jars", "");
        jars = given.isEmpty()
                ? List.of(PackagedDaemon.jar().orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package")))
                : List.of(given.split(",")).stream().map(Path::of).toList();
        rounds = args.integer("rounds", 2);
        warmup = args.integer("warmup", 60);
        samples = args.integer("samples", 2000);
        seconds = args.integer("seconds", 8);
        clients = args.integer("clients", 8);
        server = args.text("server", "everything");
        profiler = args.text("profiler", "");
        profiles = profiler.isEmpty() ? List.of() : List.of(args.text("profile", "cpu,alloc").split(","));
        profileClients = Math.min(args.integer("profile-clients", 1), Math.max(clients, 2));
    }

    public static void main(String[] argv) throws Exception {
        new CallPathBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private void run() throws Exception {
        List<String> command = server.equals("fixture") ? Fixture.command() : Fixture.everythingDockerCommand();
        String argument = server.equals("fixture") ? "text" : "message";
        System.out.printf("Tether call path A/B: %s, %d cores, java %s, load average %s%n", String.join(" ", command),
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), Machine.loadAverage());
        for (int round = 1; round <= rounds; round++) {
            for (Path jar : jars) {
                measure(label(jar), jar, command, argument, round);
            }
        }
        System.out.println();
        System.out.printf("load average at the end %s%n", Machine.loadAverage());
        System.out.println("| build | figure | p50 per round | calls/s per round | daemon CPU per call, JIT aside | allocated per call |");
        System.out.println("|---|---|---|---|---|---|");
        figures.forEach((jar, byFigure) -> byFigure.forEach((figure, rows) -> System.out.printf("| %s | %s | %s | %s | %s | %s |%n",
                jar, figure, join(rows, row -> String.format("%.2f ms", row.p50())), join(rows, row -> String.format("%.0f", row.rate())),
                join(rows, row -> String.format("%.0f µs", row.cpuMicros())), join(rows, row -> String.format("%.1f KiB", row.allocatedKiB())))));
    }

    private static String label(Path jar) {
        Path parent = jar.toAbsolutePath().getParent();
        return parent.getFileName().toString().equals("target") ? parent.getParent().getFileName().toString() : parent.getFileName().toString();
    }

    private void measure(String label, Path jar, List<String> command, String argument, int round) throws Exception {
        Path data = Files.createTempDirectory("tether-bench-callpath");
        try (PackagedDaemon daemon = PackagedDaemon.start(jar, data,
                List.of("--tether.discovery.executor-data-dir=" + data.resolve("executor")), Map.of());
                DaemonAllocation allocation = DaemonAllocation.attach(daemon.pid())) {
            BenchClient client = new BenchClient(daemon);
            client.addStdioServer("everything", command);
            client.refresh("everything");
            String tool = "tools.everything.org.default.echo";
            byte[] rest = BenchClient.JSON.writeValueAsBytes(Map.of("address", tool, "args", Map.of(argument, "call path")));
            String arguments = "{\"" + argument + "\":\"call path\"}";
            URI endpoint = URI.create(daemon.url() + "/mcp/tools");
            Map<String, String> auth = Map.of("Authorization", "Bearer " + daemon.token());
            List<StreamableHttpClient> sessions = new ArrayList<>();
            for (int c = 0; c < Math.max(clients, 2); c++) {
                sessions.add(StreamableHttpClient.open(client.http(), endpoint, auth));
            }
            long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(warmup);
            while (System.nanoTime() < warm) {
                concurrently(2, Duration.ofSeconds(1), c -> sessions.get(c).callTool(tool, arguments));
                CallLoad.run(client, 2, Duration.ofSeconds(1), c -> rest);
                client.send("GET", "/api/health", null);
            }
            record(label, "GET /api/health (the HTTP floor), 1 client", sequential(daemon, allocation, () -> client.send("GET", "/api/health", null)));
            record(label, "/mcp/tools tools/call echo, 1 client", sequential(daemon, allocation, () -> sessions.get(0).callTool(tool, arguments)));
            record(label, "POST /api/tools/call echo, 1 client", sequential(daemon, allocation,
                    () -> client.send("POST", "/api/tools/call", BenchClient.JSON.readTree(rest))));
            record(label, "/mcp/tools tools/call echo, " + clients + " clients", measured(daemon, allocation,
                    () -> concurrently(clients, Duration.ofSeconds(seconds), c -> sessions.get(c).callTool(tool, arguments))));
            for (String event : profiles) {
                profile(daemon, label + "-" + round, event, () -> concurrently(profileClients, Duration.ofSeconds(seconds),
                        c -> sessions.get(c).callTool(tool, arguments)));
            }
            System.out.printf("%s round %d done (load %s): RSS %.0f MiB%n", label, round, Machine.loadAverage(), daemon.residentMiB());
            sessions.forEach(StreamableHttpClient::close);
        }
    }

    /**
     * Runs {@code load} under async-profiler ({@code event}: cpu, alloc, lock, wall), loaded into the daemon with
     * {@code jcmd JVMTI.agent_load}; writes a flame graph and the collapsed stacks to the temp dir.
     */
    private void profile(PackagedDaemon daemon, String name, String event, Measurement load) throws Exception {
        Path out = Path.of(System.getProperty("java.io.tmpdir"), "callpath-" + name + "-" + event);
        String interval = event.equals("cpu") ? ",interval=1ms" : "";
        jcmd(daemon, "start,event=" + event + interval + ",threads");
        load.run();
        jcmd(daemon, "dump,file=" + out + ".collapsed");
        jcmd(daemon, "stop,file=" + out + ".html");
        System.out.printf("  profile %s: %s.html, %s.collapsed%n", event, out, out);
    }

    private void jcmd(PackagedDaemon daemon, String command) throws Exception {
        Path java = Path.of("/proc", Long.toString(daemon.pid()), "exe").toRealPath();
        Process jcmd = new ProcessBuilder(java.resolveSibling("jcmd").toString(), Long.toString(daemon.pid()), "JVMTI.agent_load",
                // quoted: jcmd passes the options on to the agent as one string only so
                profiler, "\"" + command + "\"").redirectErrorStream(true).start();
        String said = new String(jcmd.getInputStream().readAllBytes());
        if (jcmd.waitFor() != 0 || !said.contains("return code: 0")) {
            throw new IllegalStateException("jcmd " + command + ": " + said);
        }
    }

    private void record(String label, String figure, Figure measured) {
        figures.computeIfAbsent(label, any -> new LinkedHashMap<>()).computeIfAbsent(figure, any -> new ArrayList<>()).add(measured);
        System.out.printf("  %s: %s p50 %.2f ms, %.0f/s, %.0f µs CPU, %.1f KiB per call%n", label, figure, measured.p50(), measured.rate(),
                measured.cpuMicros(), measured.allocatedKiB());
    }

    private Figure sequential(PackagedDaemon daemon, DaemonAllocation allocation, Call call) throws Exception {
        for (int i = 0; i < samples / 4; i++) {
            call.run();
        }
        return measured(daemon, allocation, () -> {
            List<Long> micros = new ArrayList<>();
            long began = System.nanoTime();
            for (int i = 0; i < samples; i++) {
                long start = System.nanoTime();
                call.run();
                micros.add((System.nanoTime() - start) / 1_000);
            }
            return new Run(Latencies.of(micros), samples / ((System.nanoTime() - began) / 1e9), 0);
        });
    }

    private static Figure measured(PackagedDaemon daemon, DaemonAllocation allocation, Measurement measurement) throws Exception {
        Duration cpu = requestCpu(daemon);
        long allocated = allocation.allocatedBytes();
        Run run = measurement.run();
        long allocatedAfter = allocation.allocatedBytes();
        Duration cpuAfter = requestCpu(daemon);
        int calls = run.latencies().micros().size() + run.errors();
        if (run.errors() > 0) {
            System.out.printf("  (%d errors)%n", run.errors());
        }
        return new Figure(run.latencies().p50(), run.rate(), cpuAfter.minus(cpu).toNanos() / 1e3 / calls,
                (allocatedAfter - allocated) / 1024.0 / calls);
    }

    /** {@code clients} threads calling back to back for {@code length}; client {@code c} calls with {@code call}. */
    private static Run concurrently(int clients, Duration length, ClientCall call) throws InterruptedException {
        ConcurrentLinkedQueue<Long> micros = new ConcurrentLinkedQueue<>();
        AtomicInteger errors = new AtomicInteger();
        long deadline = System.nanoTime() + length.toNanos();
        CountDownLatch done = new CountDownLatch(clients);
        long began = System.nanoTime();
        for (int c = 0; c < clients; c++) {
            int client = c;
            Thread caller = new Thread(() -> {
                try {
                    while (System.nanoTime() < deadline) {
                        long start = System.nanoTime();
                        try {
                            call.call(client);
                            micros.add((System.nanoTime() - start) / 1_000);
                        } catch (Exception failed) {
                            errors.incrementAndGet();
                        }
                    }
                } finally {
                    done.countDown();
                }
            });
            caller.setDaemon(true);
            caller.start();
        }
        done.await();
        return new Run(Latencies.of(micros), micros.size() / ((System.nanoTime() - began) / 1e9), errors.get());
    }

    /** The daemon's CPU so far, its threads but the JIT's compiler threads (which go on compiling for minutes here). */
    private static Duration requestCpu(PackagedDaemon daemon) {
        return daemon.cpuTimeByThreadName().entrySet().stream().filter(thread -> !thread.getKey().contains("CompilerThre"))
                .map(Map.Entry::getValue).reduce(Duration.ZERO, Duration::plus);
    }

    private static String join(List<Figure> rows, java.util.function.Function<Figure, String> column) {
        return String.join(" / ", rows.stream().map(column).toList());
    }

    private interface Call {
        void run() throws Exception;
    }

    private interface ClientCall {
        void call(int client) throws Exception;
    }

    private interface Measurement {
        Run run() throws Exception;
    }

    private record Run(Latencies latencies, double rate, int errors) {
    }

    private record Figure(double p50, double rate, double cpuMicros, double allocatedKiB) {
    }
}
