package dev.tether.bench;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import tools.jackson.databind.JsonNode;

import dev.tether.testsupport.Await;
import dev.tether.testsupport.HaproxyRoundRobin;
import dev.tether.testsupport.OsProcesses;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.PostgresDatabase;

/**
 * Tether replicas on one PostgreSQL, as issue 16 asks them measured: packaged daemons ({@code bin/tether}) on a fresh
 * schema of the tests' PostgreSQL ({@code TETHER_TEST_POSTGRES*}), each connection a plain node fixture server, its
 * warm child on the connection's owner replica. Prints:
 * <ul>
 * <li>warm tool calls per second from 1, 8 and 32 clients (client {@code c} calls connection {@code c mod
 * connections}), first against one replica alone, then through Debian's HAProxy, round robin over three (a call
 * lands on a non-owner, which forwards it once, two times in three); beside each, the CPU time per call of the
 * daemons, their children, HAProxy and this client, from {@code /proc}, and how many of the cores were busy;</li>
 * <li>the forwarding overhead: the same warm call alternately to its owner and to a peer that forwards it;</li>
 * <li>how long a connection owned by a replica goes unserved after {@code kill -9} of that replica, and after its
 * SIGTERM: from the signal to the first 200 of a call sent to a survivor.</li>
 * </ul>
 * Run it with {@code bench/replicas.sh}. Arguments: {@code samples=500 seconds=5 warmup=90 clients=1,8,32
 * connections=6 moves=3 lease-ttl=15 heartbeat=5 figures=calls,forwarding,moves} (times in seconds; the lease's are the
 * daemon's defaults). The warm-up is long because three JVMs share the cores while C2 compiles the request path in each.
 */
public final class ReplicasBenchmark {

    private static final int REPLICAS = 3;
    private static final String TOKEN = "bench-replicas-" + UUID.randomUUID();
    private static final Duration BOUND = Duration.ofSeconds(120);
    /** One probe after a signal: a forward to a replica that is draining may wait for it. */
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);

    private final int samples;
    private final int seconds;
    /** Seconds of calls through each cluster before its first figure, for the JIT's second tier to settle. */
    private final int warmup;
    private final int[] clients;
    /** Which figures to measure, for a quicker run of one of them: calls, forwarding, moves. */
    private final Set<String> figures;
    private final int connections;
    /** How many times ownership is moved by each signal. */
    private final int moves;
    private final Duration leaseTtl;
    private final Duration heartbeat;
    private final List<PackagedDaemon> started = new ArrayList<>();
    /** Where each figure's CPU went in the daemons, printed under the table. */
    private final List<String> threadLines = new ArrayList<>();
    /** Each replica's data dir is its own: replicas sharing one would share an instance id. */
    private final AtomicInteger dataDirs = new AtomicInteger();
    private Path jar;
    private Path dir;
    private PostgresDatabase postgres;
    private String schema;
    private Map<String, String> store;

    private ReplicasBenchmark(BenchArguments args) {
        samples = args.integer("samples", 500);
        seconds = args.integer("seconds", 5);
        warmup = args.integer("warmup", 90);
        figures = Set.of(args.text("figures", "calls,forwarding,moves").split(","));
        clients = Arrays.stream(args.text("clients", "1,8,32").split(",")).mapToInt(Integer::parseInt).toArray();
        connections = args.integer("connections", 6);
        moves = args.integer("moves", 3);
        leaseTtl = Duration.ofSeconds(args.integer("lease-ttl", 15));
        heartbeat = Duration.ofSeconds(args.integer("heartbeat", 5));
    }

    public static void main(String[] argv) throws Exception {
        ReplicasBenchmark benchmark = new ReplicasBenchmark(BenchArguments.parse(argv));
        boolean completed = false;
        try {
            benchmark.run();
            completed = true;
        }
        finally {
            benchmark.stopAll(completed);
        }
        System.exit(0);
    }

    private void run() throws Exception {
        postgres = PostgresDatabase.fromEnvironment().orElseThrow(() -> new IllegalStateException(
                "replicas need PostgreSQL: set TETHER_TEST_POSTGRES=host:port/database (and TETHER_TEST_POSTGRES_USER,"
                        + " TETHER_TEST_POSTGRES_PASSWORD unless both are tether), as the tests take it"));
        jar = PackagedDaemon.jar().orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package"));
        dir = Files.createTempDirectory("tether-bench-replicas");
        schema = postgres.createSchema("bench_replicas");
        store = postgres.daemonEnvironment(schema);
        System.out.printf("Tether replicas benchmark: %d cores, java %s, PostgreSQL %s schema %s, %d fixture connections,"
                + " lease TTL %d s, heartbeat %d s, load %s%n", Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"), postgres.hostPortDatabase(), schema, connections, leaseTtl.toSeconds(),
                heartbeat.toSeconds(), load());

        List<PackagedDaemon> replicas = new ArrayList<>(List.of(startReplica()));
        // The fixture's five tools and three generated ones.
        List<String> slugs = client(replicas.get(0)).addFixtureServers(connections, BenchClient.FIXTURE_TOOLS + 3);
        if (figures.contains("calls")) {
            callsPerSecond(replicas, slugs);
        }
        else {
            replicas.addAll(startReplicas(REPLICAS - 1));
            awaitLeases(replicas);
        }
        if (figures.contains("forwarding")) {
            Map<String, Integer> ownerOf = owners(replicas, slugs);
            System.out.printf("owners: %s%n", ownerOf);
            forwarding(replicas, slugs.get(0), ownerOf.get(slugs.get(0)));
        }
        if (figures.contains("moves")) {
            moves(replicas, slugs);
        }
        System.out.printf("load at the end: %s%n", load());
    }

    /** Through one replica alone, then through HAProxy over three: the second and third join the first here. */
    private void callsPerSecond(List<PackagedDaemon> replicas, List<String> slugs) throws Exception {
        BenchClient alone = client(replicas.get(0));
        System.out.println();
        System.out.println("| cluster | clients | calls/s | p50 / p99 | errors | forwarded | CPU per call: daemons + children + HAProxy + client | cores busy: ours / machine | load |");
        System.out.println("|---|---|---|---|---|---|---|---|---|");
        throughput("1 replica", alone, slugs, replicas, null);

        replicas.addAll(startReplicas(REPLICAS - 1));
        awaitLeases(replicas);
        try (HaproxyRoundRobin haproxy = HaproxyRoundRobin.start(dir.resolve("haproxy"), replicas.stream().map(PackagedDaemon::port).toList())) {
            throughput(REPLICAS + " replicas, HAProxy", new BenchClient("http://127.0.0.1:" + haproxy.port(), TOKEN), slugs, replicas, haproxy);
        }
        System.out.println();
        System.out.println("the daemons' busiest threads, CPU per call:");
        threadLines.forEach(line -> System.out.println("  " + line));
        System.out.println();
    }

    /** {@code moves} times each, alternately: {@code kill -9}, then SIGTERM, of a replica owning a connection. */
    private void moves(List<PackagedDaemon> replicas, List<String> slugs) throws Exception {
        List<Long> killed = new ArrayList<>();
        List<Long> terminated = new ArrayList<>();
        for (int move = 0; move < 2 * moves; move++) {
            boolean kill = move % 2 == 0;
            (kill ? killed : terminated).add(moveOwnership(replicas, slugs, kill));
            if (move < 2 * moves - 1) {
                replicas.addAll(startReplicas(1));
                awaitLeases(replicas);
            }
        }
        if (moves > 0) {
            System.out.println();
            System.out.printf("ownership moved, from the signal to the first 200 through a survivor (lease TTL %d s, heartbeat %d s):"
                    + " kill -9 p50 %s ms %s, SIGTERM p50 %s ms %s%n", leaseTtl.toSeconds(), heartbeat.toSeconds(),
                    Samples.p50(killed, Long::doubleValue), killed, Samples.p50(terminated, Long::doubleValue), terminated);
        }
    }

    /** Warm-up, then each number of clients: calls per second, latencies, and the CPU the calls cost whom. */
    private void throughput(String cluster, BenchClient client, List<String> slugs, List<PackagedDaemon> replicas,
            HaproxyRoundRobin haproxy) throws Exception {
        List<byte[]> bodies = new ArrayList<>();
        for (String slug : slugs) {
            bodies.add(BenchClient.JSON.writeValueAsBytes(echo(slug, "bench")));
        }
        int most = Arrays.stream(clients).max().orElse(1);
        CallLoad.run(client, most, Duration.ofSeconds(warmup), c -> bodies.get(c % bodies.size()));
        for (int count : clients) {
            CallLoad.run(client, count, Duration.ofSeconds(seconds), c -> bodies.get(c % bodies.size()));
            double forwardedBefore = forwarded(replicas);
            CpuShares before = CpuShares.now(replicas, haproxy);
            CallLoad load = CallLoad.run(client, count, Duration.ofSeconds(seconds), c -> bodies.get(c % bodies.size()));
            CpuShares spent = CpuShares.now(replicas, haproxy).minus(before);
            int calls = load.latencies().micros().size() + load.errors();
            System.out.printf("| %s | %d | %,.0f/s | %.2f / %.2f ms | %d | %.0f %% | %s | %s | %s |%n", cluster, count, load.rate(),
                    load.latencies().p50(), load.latencies().p99(), load.errors(),
                    100 * (forwarded(replicas) - forwardedBefore) / calls, spent.perCall(calls), spent.coresBusy(), load());
            threadLines.add(String.format("%s, %d client%s: %s", cluster, count, count == 1 ? "" : "s", spent.busiestThreads(calls)));
        }
    }

    /** The same warm call, one after another, alternately to its owner and to a peer that forwards it to the owner. */
    private void forwarding(List<PackagedDaemon> replicas, String slug, int owner) throws Exception {
        BenchClient direct = client(replicas.get(owner));
        BenchClient peer = client(replicas.get((owner + 1) % replicas.size()));
        Map<String, Object> call = echo(slug, "forwarded");
        // After the calls per second the replicas are warm; without them, they are warmed up here.
        long warm = System.nanoTime() + Duration.ofSeconds(figures.contains("calls") ? seconds : warmup).toNanos();
        while (System.nanoTime() < warm) {
            direct.post("/api/tools/call", call);
            peer.post("/api/tools/call", call);
        }
        List<Long> directMicros = new ArrayList<>();
        List<Long> forwardedMicros = new ArrayList<>();
        for (int i = 0; i < samples; i++) {
            directMicros.add(timed(direct, call));
            forwardedMicros.add(timed(peer, call));
        }
        Latencies owned = Latencies.of(directMicros);
        Latencies forwarded = Latencies.of(forwardedMicros);
        System.out.printf("forwarding, %d warm calls each, one at a time: to the owner p50 %.2f ms p90 %.2f ms; through a peer"
                + " p50 %.2f ms p90 %.2f ms; the hop +%.2f ms at p50, +%.2f ms at p90 (load %s)%n", samples, owned.p50(),
                owned.p90(), forwarded.p50(), forwarded.p90(), forwarded.p50() - owned.p50(), forwarded.p90() - owned.p90(), load());
        // The CPU apart, each way in a run of its own: alternating, the two ways' costs could not be told apart.
        double ownerCpu = daemonCpuPerCall(replicas, direct, call);
        double peerCpu = daemonCpuPerCall(replicas, peer, call);
        System.out.printf("the daemons' CPU per call, %d calls one at a time each way: to the owner %.3f ms, through a peer %.3f ms:"
                + " the hop %.3f ms (load %s)%n", samples, ownerCpu, peerCpu, peerCpu - ownerCpu, load());
    }

    private double daemonCpuPerCall(List<PackagedDaemon> replicas, BenchClient client, Map<String, Object> call) throws Exception {
        CpuShares before = CpuShares.now(replicas, null);
        for (int i = 0; i < samples; i++) {
            client.post("/api/tools/call", call);
        }
        return (double) CpuShares.now(replicas, null).minus(before).daemons() / samples;
    }

    private static long timed(BenchClient client, Map<String, Object> call) throws Exception {
        long start = System.nanoTime();
        client.post("/api/tools/call", call);
        return (System.nanoTime() - start) / 1_000;
    }

    /**
     * Signals the owner of a connection ({@code kill -9}, or SIGTERM), then calls that connection through a survivor
     * until one answers 200; the milliseconds from the signal to that answer. The signalled replica leaves the list.
     */
    private long moveOwnership(List<PackagedDaemon> replicas, List<String> slugs, boolean kill) throws Exception {
        Map<String, Integer> ownerOf = owners(replicas, slugs);
        // The newest replica that owns a connection, so that the first one, which registered them, stays.
        int victim = ownerOf.values().stream().max(Integer::compare).orElseThrow();
        if (victim == 0) {
            throw new IllegalStateException("only the first replica owns connections: " + ownerOf + "; use more connections");
        }
        String slug = slugs.stream().filter(s -> ownerOf.get(s) == victim).findFirst().orElseThrow();
        long owned = ownerOf.values().stream().filter(owner -> owner == victim).count();
        PackagedDaemon signalled = replicas.get(victim);
        BenchClient survivor = client(replicas.get(0));
        byte[] call = BenchClient.JSON.writeValueAsBytes(echo(slug, "moved"));
        survivor.post("/api/tools/call", echo(slug, "warm"));

        long signal = System.nanoTime();
        if (kill) {
            signalled.kill();
        }
        else {
            signalled.terminate();
        }
        List<PackagedDaemon> survivors = replicas.stream().filter(replica -> replica != signalled).toList();
        Map<String, Integer> before = new TreeMap<>();
        long exited = 0;
        long answered;
        long deadline = signal + leaseTtl.plus(heartbeat.multipliedBy(2)).plus(BOUND).toNanos();
        while (true) {
            // A 200 counts once a survivor ran the call: while it drains, the signalled replica may still answer.
            double served = callsServed(survivors);
            String outcome = probe(survivor, call);
            long now = System.nanoTime();
            if (exited == 0 && !signalled.alive()) {
                exited = now;
            }
            if (outcome.equals("200") && callsServed(survivors) > served) {
                answered = now;
                break;
            }
            before.merge(outcome.equals("200") ? "200 from the signalled replica" : outcome, 1, Integer::sum);
            if (now > deadline) {
                throw new IllegalStateException(slug + " was not served again within " + Duration.ofNanos(now - signal) + ": " + before);
            }
            Await.pause(Duration.ofMillis(50));
        }
        long moved = (answered - signal) / 1_000_000;
        signalled.close();
        if (exited == 0) {
            exited = System.nanoTime();
        }
        replicas.remove(victim);
        System.out.printf("%s of a replica owning %d of %d connections: served again through a survivor after %d ms; before"
                + " that %s; the replica's process ended %d ms after the signal (load %s)%n", kill ? "kill -9" : "SIGTERM", owned,
                slugs.size(), moved, before.isEmpty() ? "nothing" : before, (exited - signal) / 1_000_000, load());
        return moved;
    }

    /** One call's outcome: its status, with the error's tag when it is one, or {@code timeout}. */
    private static String probe(BenchClient client, byte[] call) throws InterruptedException {
        try {
            HttpResponse<String> answer = client.http().send(client.request("/api/tools/call").timeout(PROBE_TIMEOUT)
                    .POST(HttpRequest.BodyPublishers.ofByteArray(call)).build(), HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() == 200) {
                return "200";
            }
            JsonNode body = BenchClient.JSON.readTree(answer.body());
            return answer.statusCode() + " " + body.path("_tag").asString("");
        }
        catch (HttpTimeoutException slow) {
            return "no answer within " + PROBE_TIMEOUT.toSeconds() + " s";
        }
        catch (IOException | RuntimeException failed) {
            return failed.getClass().getSimpleName();
        }
    }

    /**
     * Which replica owns each connection: the first replica that serves a call of it without forwarding it (as its
     * {@code tether.replicas.forwarded} meter says).
     */
    private Map<String, Integer> owners(List<PackagedDaemon> replicas, List<String> slugs) throws Exception {
        Map<String, Integer> ownerOf = new TreeMap<>();
        for (String slug : slugs) {
            for (int r = 0; r < replicas.size() && !ownerOf.containsKey(slug); r++) {
                double before = forwarded(List.of(replicas.get(r)));
                client(replicas.get(r)).post("/api/tools/call", echo(slug, "whose"));
                if (forwarded(List.of(replicas.get(r))) == before) {
                    ownerOf.put(slug, r);
                }
            }
            if (!ownerOf.containsKey(slug)) {
                throw new IllegalStateException("every replica forwarded " + slug);
            }
        }
        return ownerOf;
    }

    /** Tool calls the replicas ran themselves (a call they forwarded is its owner's). */
    private static double callsServed(List<PackagedDaemon> replicas) throws Exception {
        return sum(replicas, "tether_calls_seconds_count", "outcome", "ok");
    }

    /** Requests the replicas passed to the replica that owns their connection. */
    private static double forwarded(List<PackagedDaemon> replicas) throws Exception {
        return sum(replicas, "tether_replicas_forwarded_total", "outcome", "answered");
    }

    private static double sum(List<PackagedDaemon> replicas, String sample, String... labels) throws Exception {
        double sum = 0;
        for (PackagedDaemon replica : replicas) {
            sum += replica.metrics().sum(sample, labels);
        }
        return sum;
    }

    private static Map<String, Object> echo(String slug, String text) {
        return Map.of("address", "tools." + slug + ".org.default.echo", "args", Map.of("text", text));
    }

    private static BenchClient client(PackagedDaemon replica) {
        return new BenchClient(replica.url(), TOKEN);
    }

    private PackagedDaemon startReplica() {
        try {
            PackagedDaemon replica = PackagedDaemon.start(jar, dir.resolve("replica-" + dataDirs.getAndIncrement()), List.of(
                    "--tether.api.token=" + TOKEN, "--tether.replicas.address=127.0.0.1",
                    "--tether.replicas.heartbeat=" + heartbeat.toSeconds() + "s",
                    "--tether.replicas.lease-ttl=" + leaseTtl.toSeconds() + "s",
                    // warm sessions stay for the whole run, so that every figure is of warm connections
                    "--tether.session.idle-ttl=1h"), store);
            synchronized (started) {
                started.add(replica);
            }
            return replica;
        }
        catch (IOException | InterruptedException ex) {
            throw new IllegalStateException("a replica did not start", ex);
        }
    }

    /** Started at once: the launcher's lock lets one train the start-up cache while the others wait to use it. */
    private List<PackagedDaemon> startReplicas(int count) {
        List<CompletableFuture<PackagedDaemon>> starting = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            starting.add(CompletableFuture.supplyAsync(this::startReplica, PackagedDaemon.SIDE_BY_SIDE));
        }
        return starting.stream().map(CompletableFuture::join).toList();
    }

    /** Until every replica has read a live lease for each of them, and so agrees on the owners. */
    private static void awaitLeases(List<PackagedDaemon> replicas) {
        Await.until(() -> replicas.stream().allMatch(replica -> {
            try {
                return replica.metrics().sum("tether_replicas_live") == replicas.size();
            }
            catch (IOException | InterruptedException notYet) {
                return false;
            }
        }), BOUND, () -> "every replica sees " + replicas.size() + " live leases");
    }

    /** Every replica stopped, then their schema gone, and their data dirs unless the run failed: their logs say why. */
    private void stopAll(boolean completed) throws InterruptedException, IOException {
        for (PackagedDaemon replica : started) {
            replica.close();
        }
        if (schema != null) {
            postgres.dropSchema(schema);
        }
        if (dir != null && completed) {
            Samples.delete(dir);
        }
        else if (dir != null) {
            System.out.printf("the replicas' data dirs and logs are kept in %s%n", dir);
        }
    }

    private static String load() throws IOException {
        return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    }

    /**
     * CPU time used so far, from {@code /proc}: the replicas' JVMs, their children (the fixture servers), HAProxy and
     * this benchmark's JVM (its clients), in milliseconds, and the whole machine's busy and total clock ticks.
     */
    private record CpuShares(long daemons, Map<String, Long> threads, long children, long haproxy, long client, long machineBusy,
            long machineTotal) {

        static CpuShares now(List<PackagedDaemon> replicas, HaproxyRoundRobin haproxy) throws IOException {
            long daemons = 0;
            Map<String, Long> threads = new TreeMap<>();
            long children = 0;
            for (PackagedDaemon replica : replicas) {
                daemons += replica.cpuTime().toMillis();
                replica.cpuTimeByThreadName().forEach((name, time) -> threads.merge(name, time.toMillis(), Long::sum));
                children += ProcessHandle.of(replica.pid()).stream().flatMap(ProcessHandle::descendants)
                        .mapToLong(child -> OsProcesses.cpuTime(child.pid()).toMillis()).sum();
            }
            // "cpu user nice system idle iowait irq softirq steal ...": idle and iowait are the idle time.
            long[] ticks = Arrays.stream(Files.readString(Path.of("/proc/stat")).lines().findFirst().orElseThrow()
                    .split("\\s+")).skip(1).limit(8).mapToLong(Long::parseLong).toArray();
            long total = Arrays.stream(ticks).sum();
            return new CpuShares(daemons, threads, children, haproxy == null ? 0 : OsProcesses.cpuTime(haproxy.pid()).toMillis(),
                    OsProcesses.cpuTime(ProcessHandle.current().pid()).toMillis(), total - ticks[3] - ticks[4], total);
        }

        CpuShares minus(CpuShares earlier) {
            Map<String, Long> spent = new TreeMap<>(threads);
            earlier.threads.forEach((name, time) -> spent.merge(name, -time, Long::sum));
            return new CpuShares(daemons - earlier.daemons, spent, children - earlier.children, haproxy - earlier.haproxy,
                    client - earlier.client, machineBusy - earlier.machineBusy, machineTotal - earlier.machineTotal);
        }

        String perCall(int calls) {
            return String.format("%.3f + %.3f + %.3f + %.3f ms", (double) daemons / calls, (double) children / calls,
                    (double) haproxy / calls, (double) client / calls);
        }

        /** The daemons' threads that used the most CPU, per call, by name (a pool's threads as one). */
        String busiestThreads(int calls) {
            return threads.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(6)
                    .map(thread -> String.format("%s %.3f", thread.getKey(), (double) thread.getValue() / calls))
                    .collect(Collectors.joining(", ", "", " ms"));
        }

        /** Of the machine's cores, how many this benchmark's processes kept busy, and how many everything did. */
        String coresBusy() {
            int cores = Runtime.getRuntime().availableProcessors();
            // /proc/stat counts clock ticks of every core: a share of all of them, times the cores
            double ours = (double) (daemons + children + haproxy + client) / 10 / machineTotal * cores;
            return String.format("%.2f / %.2f of %d", ours, (double) machineBusy / machineTotal * cores, cores);
        }
    }
}
