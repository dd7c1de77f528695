package dev.tether.bench;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import dev.tether.TetherProperties;
import dev.tether.docker.DockerEngine;
import dev.tether.docker.DockerProperties;
import dev.tether.docker.DockerRunRewriter;
import dev.tether.docker.InstanceId;
import dev.tether.mcp.McpProperties;
import dev.tether.mcp.McpSessions;
import dev.tether.mcp.StdioServer;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ProcessProperties;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;
import tools.jackson.databind.json.JsonMapper;

/**
 * The bug report's refresh storm against a real Tether daemon (the packaged jar, started here), with
 * docker stdio servers, and the figures that say what it cost. Run it with {@code bench/storm.sh}.
 *
 * <p>Arguments: {@code servers=6 rounds=5 abort=0.7 seed=42}.
 */
public final class StormBenchmark {

    private final BenchArguments args;
    private final Random random;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    private PackagedDaemon daemon;

    private StormBenchmark(BenchArguments args) {
        this.args = args;
        this.random = new Random(args.integer("seed", 42));
    }

    public static void main(String[] argv) throws Exception {
        new StormBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private void run() throws Exception {
        int servers = args.integer("servers", 6);
        int rounds = args.integer("rounds", 5);
        double abort = args.decimal("abort", 0.7);
        Path jar = PackagedDaemon.jar()
                .orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package"));
        daemon = PackagedDaemon.start(jar, Files.createTempDirectory("tether-bench"),
                List.of("--tether.session.idle-ttl=5s"), Map.of());
        try {
            System.out.printf("Tether storm benchmark: %d docker stdio servers, %d rounds, %.0f%% of requests aborted%n",
                    servers, rounds, abort * 100);
            List<String> connections = register(servers);
            Sampler peak = Sampler.start(daemon.instanceId());
            long stormStart = System.nanoTime();
            AtomicInteger aborted = new AtomicInteger();
            AtomicInteger requests = new AtomicInteger();
            for (int round = 0; round < rounds; round++) {
                reload(connections, abort, aborted, requests);
            }
            long stormMillis = (System.nanoTime() - stormStart) / 1_000_000;
            double spawned = daemon.metrics().spawned("docker");
            Thread.sleep(5_000 + 6_000); // idle-ttl, then the longest teardown ladder
            int stranded = DockerContainers.withLabel("tether.instance", daemon.instanceId()).size();
            peak.stopSampling();
            System.out.printf("storm: %d requests (%d aborted) in %d ms%n", requests.get(), aborted.get(), stormMillis);
            System.out.printf("containers spawned: %.0f (for %d connections), peak live: %d, stranded after settle: %d%n",
                    spawned, servers, peak.peak(), stranded);

            latency("health check, warm", () -> post("/api/connections/org/" + connections.get(0) + "/default/health"), 200);
            coldHealthChecks();
            teardownLatency("EOF-respecting server", "--hang-on-initialize");
            teardownLatency("server ignoring EOF and SIGTERM", "--hang-on-initialize", "--ignore-eof", "--ignore-sigterm");
            callsPerSecond(connections.get(0));
        }
        finally {
            daemon.stop();
            DockerContainers.removeAllWithLabel(Fixture.DOCKER_LABEL);
        }
    }

    private List<String> register(int servers) throws Exception {
        List<String> slugs = new ArrayList<>();
        for (int i = 0; i < servers; i++) {
            List<String> command = switch (i % 3) {
                case 0 -> Fixture.dockerCommand("--tools=40");
                case 1 -> Fixture.everythingDockerCommand();
                default -> Fixture.dockerCommand("--slow-start=300", "--ignore-eof");
            };
            slugs.add(registerServer("storm " + i, command));
        }
        return slugs;
    }

    /** One app reload: integrations, a catalog sync, parallel health checks and connection polling, mostly abandoned. */
    private void reload(List<String> connections, double abort, AtomicInteger aborted, AtomicInteger requests) throws Exception {
        List<CompletableFuture<?>> inFlight = new ArrayList<>();
        inFlight.add(send("GET", "/api/integrations"));
        inFlight.add(send("GET", "/api/tools"));
        for (String slug : connections) {
            inFlight.add(send("POST", "/api/connections/org/" + slug + "/default/health"));
            inFlight.add(send("GET", "/api/connections"));
        }
        requests.addAndGet(inFlight.size());
        for (CompletableFuture<?> request : inFlight) {
            if (random.nextDouble() < abort) {
                Thread.sleep(random.nextInt(40));
                if (request.cancel(true)) {
                    aborted.incrementAndGet();
                }
            }
        }
        CompletableFuture.allOf(inFlight.stream().map(f -> f.exceptionally(e -> null)).toArray(CompletableFuture[]::new)).join();
        Thread.sleep(200 + random.nextInt(300));
    }

    private void coldHealthChecks() throws Exception {
        List<Long> samples = new ArrayList<>();
        for (int i = 0; i < 15; i++) {
            String slug = registerServer("cold " + i, Fixture.dockerCommand());
            long start = System.nanoTime();
            post("/api/connections/org/" + slug + "/default/health");
            samples.add((System.nanoTime() - start) / 1_000_000);
            send("DELETE", "/api/mcp/servers/" + slug).join();
        }
        print("health check, cold (docker spawn + handshake + ping)", samples);
    }

    /** Client aborts a check while the server hangs in its handshake; time until the engine no longer lists the container. */
    private void teardownLatency(String label, String... flags) throws Exception {
        String slug = registerServer("teardown " + label, Fixture.dockerCommand(flags));
        List<Long> samples = new ArrayList<>();
        for (int i = 0; i < 15; i++) {
            CompletableFuture<?> check = send("POST", "/api/connections/org/" + slug + "/default/health");
            while (DockerContainers.withLabel("tether.instance", daemon.instanceId()).stream().noneMatch(c -> "running".equals(c.getState()))) {
                Thread.sleep(10);
            }
            long start = System.nanoTime();
            check.cancel(true);
            while (!DockerContainers.withLabel("tether.instance", daemon.instanceId()).isEmpty()) {
                Thread.sleep(10);
            }
            samples.add((System.nanoTime() - start) / 1_000_000);
        }
        send("DELETE", "/api/mcp/servers/" + slug).join();
        print("teardown, client abort -> container gone, " + label, samples);
    }

    private void callsPerSecond(String slug) throws Exception {
        post("/api/connections/org/" + slug + "/default/refresh");
        String body = "{\"address\":\"tools." + slug + ".org.default.echo\",\"args\":{\"text\":\"hi\"}}";
        int warmCalls = 300;
        long start = System.nanoTime();
        for (int i = 0; i < warmCalls; i++) {
            http.send(daemon.request("/api/tools/call").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
        }
        double warm = warmCalls / ((System.nanoTime() - start) / 1e9);

        // The original's way: a fresh docker child per call, here through Tether's own one-shot session.
        Path dataDir = Files.createTempDirectory("tether-bench-cold");
        TetherProperties tether = new TetherProperties(dataDir);
        DockerEngine engine = new DockerEngine(new DockerProperties(null, null, null), JsonMapper.builder().build());
        ChildProcesses children = new ChildProcesses(ProcessProperties.defaults(), tether, engine, new SimpleMeterRegistry());
        McpSessions sessions = new McpSessions(children, new DockerRunRewriter(new InstanceId(tether)), McpProperties.defaults());
        StdioServer server = StdioServer.of("cold", Fixture.dockerCommand());
        int coldCalls = 10;
        start = System.nanoTime();
        for (int i = 0; i < coldCalls; i++) {
            sessions.withSession(server, session -> session.callTool("echo", Map.of("text", "hi"))).block(Duration.ofSeconds(30));
        }
        double cold = coldCalls / ((System.nanoTime() - start) / 1e9);
        System.out.printf("tools/call echo: %.1f calls/s on one warm session over HTTP, %.2f calls/s with a cold docker spawn per call (%.0fx)%n",
                warm, cold, warm / cold);
    }

    private void latency(String label, Check check, int samplesWanted) throws Exception {
        check.run();
        List<Long> samples = new ArrayList<>();
        for (int i = 0; i < samplesWanted; i++) {
            long start = System.nanoTime();
            check.run();
            samples.add((System.nanoTime() - start) / 1_000);
        }
        Collections.sort(samples);
        System.out.printf("%s: p50 %.2f ms, p99 %.2f ms (%d samples)%n", label, samples.get(samples.size() / 2) / 1000.0,
                samples.get((int) Math.ceil(samples.size() * 0.99) - 1) / 1000.0, samples.size());
    }

    private static void print(String label, List<Long> millis) {
        List<Long> sorted = new ArrayList<>(millis);
        Collections.sort(sorted);
        System.out.printf("%s: p50 %d ms, p99 %d ms, max %d ms (%d samples)%n", label, sorted.get(sorted.size() / 2),
                sorted.get((int) Math.ceil(sorted.size() * 0.99) - 1), sorted.get(sorted.size() - 1), sorted.size());
    }

    private String registerServer(String name, List<String> argv) throws Exception {
        StringBuilder args = new StringBuilder();
        for (String arg : argv.subList(1, argv.size())) {
            args.append(args.length() == 0 ? "" : ",").append('"').append(arg.replace("\"", "\\\"")).append('"');
        }
        String body = "{\"transport\":\"stdio\",\"name\":\"" + name + "\",\"command\":\"" + argv.get(0) + "\",\"args\":[" + args + "]}";
        String answer = http.send(daemon.request("/api/mcp/servers").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Matcher slug = Pattern.compile("\"slug\"\\s*:\\s*\"([^\"]+)\"").matcher(answer);
        if (!slug.find()) {
            throw new IllegalStateException("registration failed: " + answer);
        }
        String connection = "{\"owner\":\"org\",\"name\":\"default\",\"integration\":\"" + slug.group(1)
                + "\",\"template\":\"none\",\"values\":{}}";
        HttpResponse<String> connected = http.send(daemon.request("/api/connections").POST(HttpRequest.BodyPublishers.ofString(connection))
                .build(), HttpResponse.BodyHandlers.ofString());
        if (connected.statusCode() != 200) {
            throw new IllegalStateException("connecting " + slug.group(1) + " failed: " + connected.body());
        }
        return slug.group(1);
    }

    private void post(String path) throws Exception {
        http.send(daemon.request(path).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    private CompletableFuture<HttpResponse<String>> send(String method, String path) {
        return http.sendAsync(daemon.request(path).method(method, HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }



    @FunctionalInterface
    private interface Check {
        void run() throws Exception;
    }

    /** Polls the engine for this instance's containers and keeps the highest count. */
    private static final class Sampler extends Thread {

        private final String instanceId;
        private volatile boolean running = true;
        private volatile int peak;

        private Sampler(String instanceId) {
            this.instanceId = instanceId;
            setDaemon(true);
        }

        static Sampler start(String instanceId) {
            Sampler sampler = new Sampler(instanceId);
            sampler.start();
            return sampler;
        }

        @Override
        public void run() {
            while (running) {
                peak = Math.max(peak, DockerContainers.withLabel("tether.instance", instanceId).size());
                try {
                    Thread.sleep(100);
                }
                catch (InterruptedException ex) {
                    return;
                }
            }
        }

        int peak() {
            return peak;
        }

        void stopSampling() {
            running = false;
        }
    }
}
