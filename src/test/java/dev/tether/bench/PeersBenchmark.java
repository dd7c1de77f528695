package dev.tether.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.OsProcesses;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.TestImages;

/**
 * Tether beside the gateways people pick instead, one after another, each in front of the same stdio server
 * (server-everything in {@code docker run -i --rm} of the test image) and measured by the same streamable-HTTP MCP
 * client ({@link StreamableHttpClient}, one session per worker): calls of {@code echo} per second and their p50 from 1,
 * 8 and 32 workers after a warm-up, the gateway's own CPU per call, then how many of its containers are left once it
 * was sent SIGTERM and had {@code grace} seconds to end them. The raw stdio round trip of the same server, measured in
 * the same run, is the floor: one caller's p50, and the calls/s of as many callers sharing one stdio with no gateway,
 * which no gateway in front of that one server can pass. Run it with {@code bench/peers.sh}; the peers come from npm ({@code bench/peers}).
 *
 * <p>Arguments: {@code seconds=8 warmup=10 clients=1,8,32 grace=10 peers=tether,mcp-proxy,supergateway rounds=1}. A peer
 * {@code tether@<jar>} is Tether built elsewhere (another commit's jar), so that two builds and the peers are measured
 * alternated in one run: {@code peers=tether@/tmp/before.jar,tether,mcp-proxy,supergateway}.
 */
public final class PeersBenchmark {

    /** The label that tells this benchmark's containers apart, its value the gateway that started them. */
    private static final String LABEL = "dev.tether.bench.peers";
    private static final String ECHO_ARGUMENTS = "{\"message\":\"peers\"}";
    private static final Duration START_BOUND = Duration.ofSeconds(120);

    private final int seconds;
    private final int warmup;
    private final int[] clients;
    private final int grace;
    private final int rounds;
    private final List<String> peers;
    private final Path peersDir = Fixture.projectRoot().resolve("bench/peers/node_modules/.bin");

    private PeersBenchmark(BenchArguments args) {
        seconds = args.integer("seconds", 8);
        warmup = args.integer("warmup", 10);
        clients = Arrays.stream(args.text("clients", "1,8,32").split(",")).mapToInt(Integer::parseInt).toArray();
        grace = args.integer("grace", 10);
        rounds = args.integer("rounds", 1);
        peers = List.of(args.text("peers", "tether,mcp-proxy,supergateway").split(","));
    }

    public static void main(String[] argv) throws Exception {
        new PeersBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private void run() throws Exception {
        TestImages.nodeImage(); // builds the test image when missing
        System.out.printf("Peers benchmark: %s, %d cores, load average %s%n", TestImages.nodeImage(),
                Runtime.getRuntime().availableProcessors(), Machine.loadAverage());
        Latencies floor;
        List<Load> rawLoads = new ArrayList<>();
        try (RawStdioServer raw = RawStdioServer.start(server("raw"))) {
            String echo = "{\"name\":\"echo\",\"arguments\":" + ECHO_ARGUMENTS + "}";
            floor = raw.measure("tools/call", echo, 500);
            raw.measureConcurrent("tools/call", echo, Math.max(1, clients[clients.length / 2]), Duration.ofSeconds(Math.min(warmup, 10)));
            for (int c : clients) {
                CpuWindow window = CpuWindow.open(NO_GATEWAY);
                long began = System.nanoTime();
                List<Long> micros = raw.measureConcurrent("tools/call", echo, c, Duration.ofSeconds(seconds));
                Load load = window.close(micros, 0, (System.nanoTime() - began) / 1e9);
                System.out.printf("raw, %2d callers on one stdio: %,.0f calls/s, p50 %.2f ms; CPU per call: client %.0f µs, whole machine "
                        + "%.0f µs; cores %.0f %% busy%n", c, load.rate(), load.latencies().p50(), load.clientCpuPerCall(),
                        load.machineCpuPerCall(), load.machineBusy() * 100);
                rawLoads.add(load);
            }
        }
        String rawLoadAverage = Machine.loadAverage();
        System.out.printf("raw JSON-RPC over the container's stdio, same run: tools/call echo p50 %.2f ms%n%n", floor.p50());

        Map<String, List<Row>> results = new LinkedHashMap<>();
        for (int round = 1; round <= rounds; round++) {
            for (String peer : peers) {
                results.computeIfAbsent(peer, any -> new ArrayList<>()).add(measure(peer));
            }
        }

        System.out.println();
        System.out.printf("load average at the end: %s; raw stdio echo p50 %.2f ms%n", Machine.loadAverage(), floor.p50());
        StringBuilder header = new StringBuilder("| gateway |");
        StringBuilder rule = new StringBuilder("|---|");
        for (int c : clients) {
            header.append(' ').append(c).append(c == 1 ? " client: calls/s (p50), CPU per call |" : " clients |");
            rule.append("---|");
        }
        System.out.println(header + " containers left after SIGTERM | load |");
        System.out.println(rule + "---|---|");
        System.out.println(new Row(rawLoads, -1, rawLoadAverage).line("raw stdio, no gateway (the ceiling)"));
        results.forEach((peer, rows) -> rows.forEach(row -> System.out.println(row.line(peer))));

        System.out.println();
        System.out.println("| gateway | clients | calls/s | CPU per call: gateway | client | whole machine | the rest (server, relay, kernel) | cores busy |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        for (int i = 0; i < clients.length; i++) {
            Load raw = rawLoads.get(i);
            System.out.printf("| raw stdio | %d | %,.0f | – | %.0f µs | %.0f µs | %.0f µs | %.0f %% |%n", clients[i], raw.rate(), raw.clientCpuPerCall(),
                    raw.machineCpuPerCall(), raw.machineCpuPerCall() - raw.clientCpuPerCall(), raw.machineBusy() * 100);
        }
        results.forEach((peer, rows) -> rows.forEach(row -> {
            for (int i = 0; i < row.loads().size(); i++) {
                Load l = row.loads().get(i);
                System.out.printf("| %s | %d | %,.0f | %.0f µs | %.0f µs | %.0f µs | %.0f µs | %.0f %% |%n", peer, clients[i], l.rate(),
                        l.cpuPerCall(), l.clientCpuPerCall(), l.machineCpuPerCall(),
                        l.machineCpuPerCall() - l.cpuPerCall() - l.clientCpuPerCall(), l.machineBusy() * 100);
            }
        }));
    }

    /** One gateway: started, warmed up, measured at each concurrency, then sent SIGTERM and its containers counted. */
    private Row measure(String peer) throws Exception {
        System.out.printf("== %s (load %s)%n", peer, Machine.loadAverage());
        DockerContainers.removeAllWithLabel(LABEL); // a previous run's, should one have been left
        Gateway gateway = start(peer);
        List<Load> loads = new ArrayList<>();
        int left;
        try {
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
            run(gateway, http, Math.max(1, clients[clients.length / 2]), Duration.ofSeconds(warmup));
            for (int c : clients) {
                Load load = run(gateway, http, c, Duration.ofSeconds(seconds));
                System.out.printf("   %2d clients: %,.0f calls/s, p50 %.2f ms, p99 %.2f ms, %d errors; CPU per call: gateway %.0f µs, "
                        + "client %.0f µs, whole machine %.0f µs; cores %.0f %% busy%n", c, load.rate(), load.latencies().p50(),
                        load.latencies().p99(), load.errors(), load.cpuPerCall(), load.clientCpuPerCall(), load.machineCpuPerCall(),
                        load.machineBusy() * 100);
                loads.add(load);
            }
        } finally {
            left = gateway.terminate(Duration.ofSeconds(grace));
        }
        System.out.printf("   containers left %d s after SIGTERM: %d%n", grace, left);
        int removed = DockerContainers.removeAllWithLabel(LABEL);
        if (removed > 0) {
            System.out.printf("   (removed %d of its containers before the next gateway)%n", removed);
        }
        return new Row(loads, left, Machine.loadAverage());
    }

    /**
     * {@code workers} sessions opened first (a gateway that starts a server per session starts them outside the
     * timing, each session's first call included), then every worker calls {@code echo} back to back for {@code length}.
     */
    private Load run(Gateway gateway, HttpClient http, int workers, Duration length) throws Exception {
        List<StreamableHttpClient> sessions = new ArrayList<>();
        try {
            for (int w = 0; w < workers; w++) {
                StreamableHttpClient session = StreamableHttpClient.open(http, gateway.endpoint(), gateway.headers());
                sessions.add(session);
                session.callTool(gateway.echo(), ECHO_ARGUMENTS);
            }
            ConcurrentLinkedQueue<Long> micros = new ConcurrentLinkedQueue<>();
            AtomicInteger errors = new AtomicInteger();
            AtomicReference<Exception> firstError = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(workers);
            CpuWindow window = CpuWindow.open(gateway.pid());
            long began = System.nanoTime();
            long deadline = began + length.toNanos();
            for (StreamableHttpClient session : sessions) {
                Thread worker = new Thread(() -> {
                    try {
                        while (System.nanoTime() < deadline) {
                            long start = System.nanoTime();
                            try {
                                session.callTool(gateway.echo(), ECHO_ARGUMENTS);
                                micros.add((System.nanoTime() - start) / 1_000);
                            } catch (Exception failed) {
                                errors.incrementAndGet();
                                firstError.compareAndSet(null, failed);
                            }
                        }
                    } finally {
                        done.countDown();
                    }
                });
                worker.setDaemon(true);
                worker.start();
            }
            done.await();
            Load load = window.close(List.copyOf(micros), errors.get(), (System.nanoTime() - began) / 1e9);
            if (firstError.get() != null) {
                System.out.println("   first error: " + firstError.get().getMessage());
            }
            return load;
        } finally {
            sessions.forEach(StreamableHttpClient::close);
        }
    }

    /**
     * One concurrency's figures. Beside the gateway's CPU per call, the client's (this JVM) and the whole machine's, and
     * how busy the machine's cores were: once they are all busy, calls/s is the cores' time over the CPU every call costs
     * everyone (client, gateway, {@code docker run}'s relay, the server, the kernel), and a gateway can only raise it by
     * costing less.
     */
    private record Load(double rate, Latencies latencies, int errors, double cpuPerCall, double clientCpuPerCall,
            double machineCpuPerCall, double machineBusy) {
    }

    /** The pid of the raw server's "gateway": there is none, and its CPU per call is not a number. */
    private static final long NO_GATEWAY = -1;

    /** CPU spent from its opening on: the gateway's (none for the raw server), this JVM's as the client's, the machine's. */
    private record CpuWindow(long gatewayPid, Duration gateway, Duration client, Duration machine) {

        static CpuWindow open(long gatewayPid) {
            return new CpuWindow(gatewayPid, gatewayPid == NO_GATEWAY ? Duration.ZERO : OsProcesses.cpuTime(gatewayPid),
                    OsProcesses.cpuTime(ProcessHandle.current().pid()), Machine.busyTime());
        }

        /** The load of {@code micros}' calls, made in {@code seconds}, with the CPU each cost since the opening. */
        Load close(List<Long> micros, int errors, double seconds) {
            int calls = Math.max(1, micros.size());
            Duration machineSpent = Machine.busyTime().minus(machine);
            double gatewayPerCall = gatewayPid == NO_GATEWAY ? Double.NaN
                    : OsProcesses.cpuTime(gatewayPid).minus(gateway).toNanos() / 1e3 / calls;
            return new Load(micros.size() / seconds, Latencies.of(micros.isEmpty() ? List.of(0L) : micros), errors, gatewayPerCall,
                    OsProcesses.cpuTime(ProcessHandle.current().pid()).minus(client).toNanos() / 1e3 / calls,
                    machineSpent.toNanos() / 1e3 / calls, machineSpent.toNanos() / 1e9 / seconds / Runtime.getRuntime().availableProcessors());
        }
    }

    /** A gateway's loads at each concurrency; {@code containersLeft} -1 where there was no gateway to stop. */
    private record Row(List<Load> loads, int containersLeft, String load) {

        String line(String peer) {
            StringBuilder line = new StringBuilder("| ").append(peer).append(" |");
            for (int i = 0; i < loads.size(); i++) {
                Load l = loads.get(i);
                line.append(String.format(" %,.0f", l.rate()));
                if (i == 0) {
                    line.append(Double.isNaN(l.cpuPerCall()) ? String.format(" (%.2f ms), –", l.latencies().p50())
                            : String.format(" (%.2f ms), %.0f µs", l.latencies().p50(), l.cpuPerCall()));
                } else {
                    line.append(String.format(" (p50 %.1f ms)", l.latencies().p50()));
                }
                if (l.errors() > 0) {
                    line.append(", ").append(l.errors()).append(" errors");
                }
                line.append(" |");
            }
            return line.append(' ').append(containersLeft < 0 ? "–" : Integer.toString(containersLeft)).append(" | ").append(load)
                    .append(" |").toString();
        }
    }

    /** server-everything over stdio in a container labelled as {@code peer}'s. */
    private static List<String> server(String peer) {
        return Fixture.everythingDockerCommand(List.of("--label", LABEL + "=" + peer));
    }

    private Gateway start(String peer) throws Exception {
        if (peer.startsWith("tether@")) {
            return tether(Path.of(peer.substring("tether@".length())));
        }
        return switch (peer) {
            case "tether" -> tether(PackagedDaemon.jar().orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package")));
            case "mcp-proxy" -> node(peer, port -> concat(List.of(peersDir.resolve("mcp-proxy").toString(), "--host", "127.0.0.1",
                    "--port", Integer.toString(port), "--server", "stream", "--"), server(peer)), "/mcp");
            case "supergateway" -> node(peer, port -> List.of(peersDir.resolve("supergateway").toString(), "--stdio",
                    String.join(" ", server(peer)), "--outputTransport", "streamableHttp", "--stateful", "--port",
                    Integer.toString(port), "--logLevel", "none"), "/mcp");
            default -> throw new IllegalArgumentException("no such peer: " + peer + " (tether, mcp-proxy, supergateway)");
        };
    }

    /** {@code jar} through {@code bin/tether}, with the server registered and its catalog synced, at {@code /mcp/tools}. */
    private Gateway tether(Path jar) throws Exception {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalArgumentException("no jar at " + jar);
        }
        PackagedDaemon daemon = PackagedDaemon.start(jar, Files.createTempDirectory("tether-bench-peers"), List.of(), Map.of());
        BenchClient client = new BenchClient(daemon);
        client.addStdioServer("everything", server("tether"));
        client.refresh("everything");
        return new Gateway(URI.create(daemon.url() + "/mcp/tools"), Map.of("Authorization", "Bearer " + daemon.token()),
                "tools.everything.org.default.echo", daemon.pid(), grace -> {
                    daemon.terminate(Duration.ofSeconds(30));
                    return containersAfter("tether", grace);
                });
    }

    /** A gateway from npm, started by {@code command} on a free port and awaited until a session opens on {@code path}. */
    private Gateway node(String peer, IntFunction<List<String>> command, String path) throws Exception {
        if (!Files.isExecutable(peersDir.resolve(peer))) {
            throw new IllegalStateException(peersDir.resolve(peer) + " is missing: run `npm ci` in bench/peers");
        }
        int port = Fixture.freeLoopbackPort();
        Path log = Files.createTempFile("tether-bench-" + peer, ".log");
        Process process = new ProcessBuilder(command.apply(port)).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        URI endpoint = URI.create("http://127.0.0.1:" + port + path);
        awaitSession(process, endpoint, log);
        return new Gateway(endpoint, Map.of(), "echo", process.pid(), grace -> {
            List<ProcessHandle> tree = process.descendants().toList();
            process.destroy(); // SIGTERM
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                System.out.printf("   %s did not exit within 30 s of SIGTERM: killed%n", peer);
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            int left = containersAfter(peer, grace);
            tree.forEach(ProcessHandle::destroyForcibly); // its docker clients, which the count above has waited for
            return left;
        });
    }

    private static void awaitSession(Process process, URI endpoint, Path log) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + START_BOUND.toNanos();
        while (true) {
            try (StreamableHttpClient session = StreamableHttpClient.open(http, endpoint, Map.of())) {
                return;
            } catch (IOException | RuntimeException notYet) {
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    process.destroyForcibly();
                    throw new IllegalStateException("the gateway at " + endpoint + " did not answer: " + Files.readString(log), notYet);
                }
                Thread.sleep(200);
            }
        }
    }

    /** The containers {@code peer} started that are still there {@code grace} after it exited. */
    private static int containersAfter(String peer, Duration grace) throws InterruptedException {
        Thread.sleep(grace.toMillis());
        return DockerContainers.withLabel(LABEL, peer).size();
    }

    private static List<String> concat(List<String> first, List<String> second) {
        List<String> all = new ArrayList<>(first);
        all.addAll(second);
        return all;
    }

    /** A gateway up and answering: where agents reach it, what it needs of them, and how it is stopped. */
    private record Gateway(URI endpoint, Map<String, String> headers, String echo, long pid, Stopper stopper) {

        /** SIGTERM, then the containers left after {@code grace}. */
        int terminate(Duration grace) throws Exception {
            return stopper.stop(grace);
        }
    }

    @FunctionalInterface
    private interface Stopper {
        int stop(Duration grace) throws Exception;
    }
}
