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
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.daemon.TetherProperties;
import dev.tether.docker.DockerEngine;
import dev.tether.docker.DockerProperties;
import dev.tether.docker.DockerRunRewriter;
import dev.tether.docker.InstanceId;
import dev.tether.process.ChildProcess;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ChildSpec;
import dev.tether.process.ProcessProperties;
import dev.tether.process.TeardownReport;
import dev.tether.session.PoolHarness;
import dev.tether.session.SessionProperties;
import dev.tether.store.ConnectionKey;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.PrometheusScrape;

/**
 * The refresh storm against a real Tether daemon (the packaged jar, started here): every connection a
 * server-everything in {@code docker run -i --rm}, the app reloading every {@code interval} ms and every request
 * abandoned {@code abort} ms after it was sent, faster than a cold start. Prints what the storm cost, from the
 * daemon's own meters and ladder log lines. Run it with {@code bench/storm.sh}.
 *
 * <p>Then the teardown ladder alone under the same load, in this JVM: {@code connections} docker children started at
 * once, each released {@code abort} ms after its spawn, while the engine is still creating their containers, which is what a
 * storm without joined starts does to the ladder.
 *
 * <p>Arguments: {@code connections=20 rounds=10 abort=250 interval=1000} ({@code rounds=0}: the ladder alone;
 * {@code pool=N}: N rounds on the pool alone, without and with the linger, {@code without-linger=0}: with it only); any {@code --tether.x=y} is handed to the
 * daemon, e.g. {@code --tether.session.abandoned-start-linger=0s} to see the storm without joined starts.
 */
public final class StormBenchmark {

    private static final Duration IDLE_TTL = Duration.ofSeconds(5);
    private static final Pattern TORN_DOWN = Pattern.compile("torn down at rung (\\w+) in (\\d+) ms");

    private final BenchArguments args;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    private final ScheduledExecutorService aborter = Executors.newSingleThreadScheduledExecutor();
    private PackagedDaemon daemon;

    private StormBenchmark(BenchArguments args) {
        this.args = args;
    }

    public static void main(String[] argv) throws Exception {
        new StormBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private void run() throws Exception {
        int connections = args.integer("connections", 20);
        int rounds = args.integer("rounds", 10);
        int abortMillis = args.integer("abort", 250);
        int intervalMillis = args.integer("interval", 1000);
        if (rounds == 0) {
            ladderStorm(connections, abortMillis);
            return;
        }
        if (args.integer("pool", 0) > 0) {
            if (args.integer("without-linger", 1) == 1) {
                poolStorm(connections, args.integer("pool", 0), abortMillis, intervalMillis, Duration.ZERO);
            }
            poolStorm(connections, args.integer("pool", 0), abortMillis, intervalMillis, SessionProperties.defaults().abandonedStartLinger());
            return;
        }
        Path jar = PackagedDaemon.jar()
                .orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package"));
        List<String> settings = new ArrayList<>(List.of("--tether.session.idle-ttl=" + IDLE_TTL.toSeconds() + "s",
                "--logging.level.dev.tether.process.ChildProcesses=DEBUG"));
        settings.addAll(args.daemonSettings());
        daemon = PackagedDaemon.start(jar, Files.createTempDirectory("tether-bench"), settings, Map.of());
        try {
            System.out.printf("Tether storm benchmark: %d docker connections (server-everything), %d reloads %d ms apart,"
                    + " every request abandoned after %d ms; %d cores%s%n", connections, rounds, intervalMillis, abortMillis,
                    Runtime.getRuntime().availableProcessors(), args.daemonSettings().isEmpty() ? "" : "; " + args.daemonSettings());
            // Before the storm, so that what the storm leaves (a slow store, busy engine) does not colour it.
            List<Long> cold = coldHealthChecks(5);
            List<String> slugs = new ArrayList<>();
            for (int i = 0; i < connections; i++) {
                slugs.add(registerServer("storm " + i, Fixture.everythingDockerCommand()));
            }
            Thread.sleep(5_000); // the cold sessions' teardowns end before the storm's meters start
            PrometheusScrape before = daemon.metrics();
            int logLinesBefore = Files.readAllLines(daemon.log()).size();
            Sampler peak = Sampler.start(daemon.instanceId());
            long stormStart = System.nanoTime();
            AtomicInteger aborted = new AtomicInteger();
            AtomicInteger requests = new AtomicInteger();
            for (int round = 0; round < rounds; round++) {
                long roundStart = System.nanoTime();
                reload(slugs, abortMillis, aborted, requests);
                long left = intervalMillis - (System.nanoTime() - roundStart) / 1_000_000;
                if (left > 0) {
                    Thread.sleep(left);
                }
            }
            long stormMillis = (System.nanoTime() - stormStart) / 1_000_000;
            // The warm sessions idle out, then the longest ladder (EOF, stop, TERM, KILL graces and the recheck) runs.
            Thread.sleep(IDLE_TTL.toMillis() + 20_000);
            peak.stopSampling();
            int stranded = DockerContainers.withLabel("tether.instance", daemon.instanceId()).size();
            PrometheusScrape metrics = daemon.metrics();
            double spawned = metrics.spawned("docker") - before.spawned("docker");

            System.out.printf("storm: %d requests (%d abandoned) in %d ms%n", requests.get(), aborted.get(), stormMillis);
            System.out.printf("docker children spawned: %.0f for %d connections (%.2f per connection)%n", spawned,
                    connections, spawned / connections);
            Map<String, Double> rungs = new TreeMap<>();
            for (String rung : List.of("eof", "stop", "term", "kill", "container")) {
                rungs.put(rung, metrics.sum("tether_children_teardown_total", "rung", rung)
                        - before.sum("tether_children_teardown_total", "rung", rung));
            }
            System.out.printf("teardowns by rung: %s%n", rungs);
            Map<String, Double> checks = new TreeMap<>();
            for (String outcome : List.of("healthy", "degraded", "cancelled", "coalesced", "cached")) {
                checks.put(outcome, metrics.healthChecks(outcome) - before.healthChecks(outcome));
            }
            System.out.printf("health checks that reached the daemon, by outcome: %s%n", checks);
            List<Long> teardowns = teardownMillis(logLinesBefore);
            if (!teardowns.isEmpty()) {
                print("teardown time (ladder start -> tree gone, container removed)", teardowns);
            }
            System.out.printf("containers: peak live %d, stranded after the sessions idled out %d%n", peak.peak(), stranded);
            print("cold spawn, same run (first health check of a fresh connection: docker spawn, handshake, ping)", cold);
            daemon.stop();
            ladderStorm(connections, abortMillis);
        }
        finally {
            aborter.shutdownNow();
            if (daemon.alive()) {
                daemon.stop();
            }
            // Only this daemon's: the engine may be shared with other runs.
            DockerEngine engine = new DockerEngine(new DockerProperties(null, null, null), JsonMapper.builder().build());
            for (var container : DockerContainers.withLabel("tether.instance", daemon.instanceId())) {
                engine.remove(container.getId()).block(Duration.ofSeconds(30));
            }
        }
    }

    /** Docker children started at once, each released {@code abortMillis} later; which rung ended each, and how fast. */
    private static void ladderStorm(int count, int abortMillis) throws Exception {
        Path dataDir = Files.createTempDirectory("tether-bench-ladder");
        TetherProperties tether = new TetherProperties(dataDir);
        InstanceId instance = new InstanceId(tether);
        DockerEngine engine = new DockerEngine(new DockerProperties(null, null, null), JsonMapper.builder().build());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ChildProcesses children = new ChildProcesses(ProcessProperties.defaults(), tether, engine, registry);
        DockerRunRewriter rewriter = new DockerRunRewriter(instance);
        List<ChildProcess> started = new CopyOnWriteArrayList<>();
        for (int i = 0; i < count; i++) {
            ChildSpec spec = rewriter.rewrite(ChildSpec.of(UUID.randomUUID().toString().substring(0, 12), Fixture.everythingDockerCommand()));
            // Each is released abortMillis after its spawn, while the engine still creates its container.
            children.using(spec, child -> {
                started.add(child);
                return Mono.delay(Duration.ofMillis(abortMillis)).then(Mono.empty());
            }).subscribe();
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while ((started.size() < count || !children.live().isEmpty()) && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        List<Long> took = new ArrayList<>();
        Map<String, Integer> rungs = new TreeMap<>();
        for (ChildProcess child : started) {
            TeardownReport report = child.onDispose().block(Duration.ofSeconds(5));
            took.add(report.took().toMillis());
            rungs.merge(report.rung().tag(), 1, Integer::sum);
            if (report.containerRemoved()) {
                rungs.merge("container", 1, Integer::sum);
            }
        }
        Thread.sleep(3_000); // a container asked for by a killed client would show up by now
        int stranded = DockerContainers.withLabel("tether.instance", instance.value()).size();
        System.out.printf("ladder alone: %d docker children started at once, each released %d ms after its spawn: rungs %s, stranded %d%n",
                started.size(), abortMillis, rungs, stranded);
        print("ladder alone: teardown time", took);
        for (var container : DockerContainers.withLabel("tether.instance", instance.value())) {
            engine.remove(container.getId()).block(Duration.ofSeconds(30));
        }
    }

    /**
     * The storm on the pool alone, in this JVM, without HTTP or the store in the way: each round asks every
     * connection's session for a ping and abandons it after {@code abortMillis}.
     */
    private static void poolStorm(int count, int rounds, int abortMillis, int intervalMillis, Duration linger) throws Exception {
        PoolHarness harness = PoolHarness.builder(Files.createTempDirectory("tether-bench-pool")).docker()
                .sessions(new SessionProperties(IDLE_TTL, null, null, null, null, linger)).build();
        List<ConnectionKey> keys = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            keys.add(harness.connect("pool" + i, Fixture.everythingDockerCommand()));
        }
        for (int round = 0; round < rounds; round++) {
            long roundStart = System.nanoTime();
            for (ConnectionKey key : keys) {
                harness.pool().withSession(key, session -> session.ping())
                        .timeout(Duration.ofMillis(abortMillis), Mono.empty()) // abandoned: the timeout cancels it
                        .subscribe(ignored -> { }, error -> { });
            }
            long left = intervalMillis - (System.nanoTime() - roundStart) / 1_000_000;
            Thread.sleep(Math.max(0, left));
        }
        Thread.sleep(IDLE_TTL.toMillis() + linger.toMillis() + 20_000);
        Map<String, Double> rungs = new TreeMap<>();
        for (String rung : List.of("eof", "stop", "term", "kill", "container")) {
            rungs.put(rung, harness.counter("tether.children.teardown", "rung", rung));
        }
        double spawned = harness.counter("tether.children.spawned");
        int stranded = DockerContainers.withLabel(PoolHarness.INSTANCE_LABEL, harness.instanceId()).size();
        System.out.printf("pool alone, abandoned-start-linger=%s: %.0f spawns for %d connections (%.2f each), rungs %s, "
                + "containers 25 s after the storm %d%n", linger, spawned, count, spawned / count, rungs, stranded);
        try {
            harness.close(); // waits a bounded time for the rest, then removes what is left
        }
        catch (AssertionError late) {
            System.out.printf("pool alone, abandoned-start-linger=%s: not all gone 15 s later either: %s%n", linger,
                    late.getCause() == null ? late.getMessage() : late.getCause().getMessage());
        }
    }

    /** One app reload: integrations, the catalog, a health check per connection and connection polling, each abandoned. */
    private void reload(List<String> slugs, int abortMillis, AtomicInteger aborted, AtomicInteger requests) {
        List<CompletableFuture<?>> inFlight = new ArrayList<>();
        inFlight.add(send("GET", "/api/integrations"));
        inFlight.add(send("GET", "/api/tools"));
        for (String slug : slugs) {
            inFlight.add(send("POST", "/api/connections/org/" + slug + "/default/health"));
            inFlight.add(send("GET", "/api/connections"));
        }
        requests.addAndGet(inFlight.size());
        for (CompletableFuture<?> request : inFlight) {
            aborter.schedule(() -> {
                if (request.cancel(true)) {
                    aborted.incrementAndGet();
                }
            }, abortMillis, TimeUnit.MILLISECONDS);
        }
    }

    /** Each ladder's time, from the daemon's {@code torn down at rung} log lines. */
    private List<Long> teardownMillis(int skippedLines) throws Exception {
        List<Long> millis = new ArrayList<>();
        List<String> lines = Files.readAllLines(daemon.log());
        for (String line : lines.subList(skippedLines, lines.size())) {
            Matcher matcher = TORN_DOWN.matcher(line);
            if (matcher.find()) {
                millis.add(Long.parseLong(matcher.group(2)));
            }
        }
        return millis;
    }

    /** The same run's cold start, for scale: a fresh connection's first health check (docker spawn, handshake, ping). */
    private List<Long> coldHealthChecks(int samples) throws Exception {
        List<Long> millis = new ArrayList<>();
        for (int i = 0; i < samples; i++) {
            String slug = registerServer("cold " + i, Fixture.everythingDockerCommand());
            long start = System.nanoTime();
            http.send(daemon.request("/api/connections/org/" + slug + "/default/health").POST(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString());
            millis.add((System.nanoTime() - start) / 1_000_000);
            send("DELETE", "/api/mcp/servers/" + slug).join();
        }
        return millis;
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

    private CompletableFuture<HttpResponse<String>> send(String method, String path) {
        return http.sendAsync(daemon.request(path).method(method, HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
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
