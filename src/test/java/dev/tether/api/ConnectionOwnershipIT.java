package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

import com.github.dockerjava.api.model.Container;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpMethod;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.replicas.RendezvousOwners;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.HaproxyRoundRobin;
import dev.tether.testsupport.OsProcesses;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresDocker;
import dev.tether.testsupport.RequiresPostgres;

/**
 * Three packaged daemons on one PostgreSQL and one Docker engine behind Debian's HAProxy, round robin: the bug
 * report's storm (20 connections x 10 rounds of health checks and tool calls, every request abandoned at 250 ms) on
 * cold sessions, and {@code kill -9} of one replica in the middle of it, from another thread while its requests are in
 * flight. Each connection's warm child lives on its owner replica only, so the sampled {@code docker ps} never shows
 * two containers of one connection. Meanwhile the survivors are asked for the connections they own, directly and
 * through each other, and answer every time; the dead replica's containers and its orphaned {@code docker run}
 * clients (found by the instance label in their arguments) are gone within lease TTL + 10 s of the kill, with no
 * restart of it, and its connections are served by the survivors once its lease ran out. Once the sessions idle out,
 * no container is left. Prints the forwarding overhead (warm tool call p50 through a non-owner against the owner) and
 * the times after the kill for docs/performance.md.
 */
@RequiresDocker
@RequiresPostgres
class ConnectionOwnershipIT {

    private static final String TOKEN = "ownership-it-" + UUID.randomUUID();
    private static final String RUN = UUID.randomUUID().toString().substring(0, 12);
    private static final String RUN_LABEL = "tether.test.run";
    private static final String CONNECTION_LABEL = "tether.test.connection";
    private static final int REPLICAS = 3;
    private static final int CONNECTIONS = 20;
    private static final int ROUNDS = 10;
    /** The storm round in which one replica is killed, once some rounds have warmed its sessions. */
    private static final int KILL_ROUND = 3;
    private static final Duration ABANDON = Duration.ofMillis(250);
    private static final Duration IDLE_TTL = Duration.ofSeconds(6);
    /** Short, so that the kill's part is quick; not shorter, as a replica starved of CPU for that long is taken for dead. */
    private static final Duration LEASE_TTL = Duration.ofSeconds(6);
    /** Issue 16: a killed replica's containers and docker run clients are gone within the lease's expiry and this. */
    private static final Duration AFTER_EXPIRY = Duration.ofSeconds(10);
    private static final Duration BOUND = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private final List<PackagedDaemon> daemons = Collections.synchronizedList(new ArrayList<>());
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
    private final ExecutorService background = Executors.newFixedThreadPool(2);
    private final AtomicBoolean storming = new AtomicBoolean(true);
    private HaproxyRoundRobin haproxy;

    @AfterEach
    void stop() throws InterruptedException {
        storming.set(false);
        sampler.shutdownNow();
        background.shutdownNow();
        if (haproxy != null) {
            haproxy.close();
        }
        for (PackagedDaemon daemon : daemons) {
            daemon.close();
            // What the replicas said about each other's leases, for a failure's reader: the logs go with the temp dir.
            try (var lines = Files.lines(daemon.log())) {
                lines.filter(line -> line.contains("lease") || line.contains("replicas alive") || line.contains("reap")
                                || line.contains("removed container"))
                        .forEach(line -> System.out.println("[ownership] " + daemon.log().getParent().getFileName() + ": " + line));
            }
            catch (IOException unreadable) {
                System.out.println("[ownership] cannot read " + daemon.log() + ": " + unreadable);
            }
        }
        DockerContainers.awaitNoneWithLabel(RUN_LABEL, RUN, Duration.ofSeconds(30));
    }

    @Test
    void oneContainerPerConnectionAcrossThreeReplicasBehindHaproxyUnderAStormThatKillsOne() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        // Started at once: the launcher's lock lets one train the start-up cache while the others wait to use it.
        Map<String, String> store = postgres.daemonEnvironment(postgres.createSchema("ownership"));
        List<CompletableFuture<PackagedDaemon>> starting = new ArrayList<>();
        for (int i = 0; i < REPLICAS; i++) {
            Path dataDir = dir.resolve("replica-" + i);
            starting.add(CompletableFuture.supplyAsync(() -> start(dataDir, store)));
        }
        List<PackagedDaemon> replicas = starting.stream().map(CompletableFuture::join).toList();
        List<TetherClient> direct = replicas.stream().map(daemon -> new TetherClient(daemon.port(), TOKEN)).toList();
        haproxy = HaproxyRoundRobin.start(dir.resolve("haproxy"), replicas.stream().map(PackagedDaemon::port).toList());
        TetherClient balanced = new TetherClient(haproxy.port(), TOKEN);
        List<String> instances = replicas.stream().map(PackagedDaemon::instanceId).toList();
        Await.until(() -> direct.stream().allMatch(client -> client.metrics().sum("tether_replicas_live") == REPLICAS), BOUND,
                () -> "every replica sees the three leases");

        List<String> slugs = new ArrayList<>();
        for (int i = 0; i < CONNECTIONS; i++) {
            slugs.add(balanced.register("everything-" + i, Fixture.everythingDockerCommand(
                    List.of("--label", RUN_LABEL + "=" + RUN, "--label", CONNECTION_LABEL + "=" + i))));
        }
        Await.until(() -> direct.stream().allMatch(client -> client.get("/api/connections").json().size() == CONNECTIONS),
                BOUND, () -> "every replica has read the connections");

        // Whose each connection is among the three, and whose it becomes once the last replica is dead: as the
        // replicas compute it from the leases, checked below against the containers the engine shows.
        int dead = REPLICAS - 1;
        String deadInstance = instances.get(dead);
        List<String> ownerOf = new ArrayList<>();
        List<String> heirOf = new ArrayList<>();
        for (String slug : slugs) {
            ConnectionKey key = ConnectionKey.org(slug, "default");
            ownerOf.add(RendezvousOwners.of(key, instances));
            heirOf.add(RendezvousOwners.of(key, instances.subList(0, dead)));
        }
        assertThat(Set.copyOf(ownerOf)).as("owners: every replica owns some of %d connections", CONNECTIONS).hasSize(REPLICAS);
        List<Integer> orphaned = IntStream.range(0, CONNECTIONS).filter(i -> ownerOf.get(i).equals(deadInstance)).boxed().toList();
        List<Integer> kept = IntStream.range(0, CONNECTIONS).filter(i -> !ownerOf.get(i).equals(deadInstance)).boxed().toList();

        Map<Integer, Integer> mostAtOnce = new ConcurrentHashMap<>();
        Map<Integer, Set<String>> instancesOf = new ConcurrentHashMap<>();
        List<String> doubles = Collections.synchronizedList(new ArrayList<>());
        sampler.scheduleWithFixedDelay(() -> sample(mostAtOnce, instancesOf, doubles), 0, 150, TimeUnit.MILLISECONDS);

        // All along the storm and the kill, the survivors are asked for the connections they own, directly and
        // through the other survivor (which forwards), and wait for their answers: none may fail.
        List<String> steadyFailures = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger steadyAnswered = new AtomicInteger();
        CompletableFuture<Void> steady = CompletableFuture.runAsync(() -> {
            for (int turn = 0; storming.get(); turn++) {
                int connection = kept.get(turn % kept.size());
                int survivor = (turn / kept.size()) % dead;
                TetherClient.Reply reply = direct.get(survivor).post("/api/tools/call", echo(slugs.get(connection), "steady " + turn));
                if (reply.status() == 200 && reply.body().contains("steady " + turn)) {
                    steadyAnswered.incrementAndGet();
                }
                else {
                    steadyFailures.add(slugs.get(connection) + " through survivor " + survivor + ": " + reply);
                }
            }
        }, background);

        // The bug report's storm on cold sessions: every connection in every round, health checks and tool calls
        // alternating, each request abandoned at 250 ms; HAProxy sends each to the next replica. In round KILL_ROUND,
        // another thread kills one replica while that round's requests are in flight.
        AtomicLong killedAt = new AtomicLong();
        AtomicReference<Instant> killedInstant = new AtomicReference<>();
        AtomicInteger clientsAtKill = new AtomicInteger();
        AtomicInteger containersAtKill = new AtomicInteger();
        CompletableFuture<Void> kill = null;
        long stormStart = System.nanoTime();
        for (int round = 0; round < ROUNDS; round++) {
            int r = round;
            if (round == KILL_ROUND) {
                kill = CompletableFuture.runAsync(() -> {
                    clientsAtKill.set(dockerRunClientsOf(deadInstance).size());
                    containersAtKill.set(DockerContainers.withLabel("tether.instance", deadInstance).size());
                    killedAt.set(System.nanoTime());
                    killedInstant.set(Instant.now());
                    try {
                        replicas.get(dead).kill();
                    }
                    catch (InterruptedException ex) {
                        throw new IllegalStateException(ex);
                    }
                }, CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS, background));
            }
            Flux.range(0, CONNECTIONS)
                    .flatMap(i -> request(balanced, slugs.get(i), i + r, "storm " + r).take(ABANDON), CONNECTIONS)
                    .then()
                    .block(BOUND);
        }
        kill.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        long killed = killedAt.get();
        System.out.printf("[ownership] storm: %d connections x %d rounds through HAProxy over %d replicas in %d ms, every"
                + " request abandoned at %d ms; replica %d killed in round %d with %d containers and %d docker run clients%n",
                CONNECTIONS, ROUNDS, REPLICAS, Duration.ofNanos(System.nanoTime() - stormStart).toMillis(), ABANDON.toMillis(),
                dead, KILL_ROUND, containersAtKill.get(), clientsAtKill.get());

        // Its containers and its docker run clients, orphaned when its JVM died, go within the lease's expiry + 10 s.
        Duration bound = LEASE_TTL.plus(AFTER_EXPIRY);
        long[] goneAt = new long[2];
        Await.until(() -> {
            long now = System.nanoTime();
            if (goneAt[0] == 0 && DockerContainers.withLabel("tether.instance", deadInstance).isEmpty()) {
                goneAt[0] = now;
            }
            if (goneAt[1] == 0 && dockerRunClientsOf(deadInstance).isEmpty()) {
                goneAt[1] = now;
            }
            return goneAt[0] != 0 && goneAt[1] != 0;
        }, Await.remaining(killed, bound), () -> "the killed replica's containers and docker run clients are gone within "
                + bound + " of the kill; left: " + DockerContainers.withLabel("tether.instance", deadInstance).stream()
                .map(DockerContainers::describe).toList() + ", clients " + dockerRunClientsOf(deadInstance).stream()
                .map(client -> OsProcesses.describe(client.pid())).toList());
        Await.until(() -> direct.get(0).post("/api/tools/call", echo(slugs.get(orphaned.get(0)), "moved")).status() == 200, BOUND,
                () -> "the dead replica's connection " + slugs.get(orphaned.get(0)) + " is served by a survivor");
        long moved = System.nanoTime();
        for (int connection : orphaned) {
            for (int survivor = 0; survivor < dead; survivor++) {
                assertThat(direct.get(survivor).post("/api/tools/call", echo(slugs.get(connection), "moved")).status())
                        .as("%s, once the dead replica's, through survivor %d", slugs.get(connection), survivor).isEqualTo(200);
            }
        }
        storming.set(false);
        steady.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertThat(steadyFailures).as("calls of the survivors' own connections during the storm and the kill").isEmpty();
        assertThat(steadyAnswered.get()).as("calls of the survivors' own connections answered").isPositive();
        System.out.printf("[ownership] kill -9 of a replica owning %d of %d connections mid-storm: its containers gone %d ms"
                + " and its docker run clients %d ms after the kill (bound %d ms), its connections served again after %d ms"
                + " (lease TTL %d s, heartbeat 1 s); %d calls of the survivors' own connections meanwhile, none failed%n",
                orphaned.size(), CONNECTIONS, (goneAt[0] - killed) / 1_000_000, (goneAt[1] - killed) / 1_000_000,
                bound.toMillis(), (moved - killed) / 1_000_000, LEASE_TTL.toSeconds(), steadyAnswered.get());

        // Then requests that wait for their answers, through HAProxy (which has taken the dead replica out): every one
        // succeeds, wherever it lands.
        List<TetherClient.Reply> refreshed = Flux.fromIterable(slugs)
                .flatMap(slug -> balanced.exchange(HttpMethod.POST, "/api/connections/org/" + slug + "/default/refresh", null), 4)
                .collectList().block(BOUND);
        assertThat(refreshed).hasSize(CONNECTIONS).allSatisfy(reply -> assertThat(reply.status()).as(reply.toString()).isEqualTo(200));
        List<TetherClient.Reply> answered = Flux.range(0, 2 * CONNECTIONS)
                .flatMap(i -> request(balanced, slugs.get(i % CONNECTIONS), i / CONNECTIONS + i, "answered"), CONNECTIONS)
                .collectList().block(BOUND);
        assertThat(answered).hasSize(2 * CONNECTIONS)
                .allSatisfy(reply -> assertThat(reply.status()).as(reply.toString()).isEqualTo(200));

        // Each connection called through both survivors directly: one of them is not its owner and forwards.
        for (int connection = 0; connection < CONNECTIONS; connection++) {
            for (int survivor = 0; survivor < dead; survivor++) {
                TetherClient.Reply reply = direct.get(survivor).post("/api/tools/call", echo(slugs.get(connection), "through " + survivor));
                assertThat(reply.status()).as("call of %s through survivor %d: %s", slugs.get(connection), survivor, reply)
                        .isEqualTo(200);
                assertThat(reply.body()).contains("through " + survivor);
            }
        }
        assertThat(direct.subList(0, dead).stream()
                .mapToDouble(client -> client.metrics().sum("tether_replicas_forwarded_total", "outcome", "answered")).sum())
                .as("requests forwarded").isGreaterThanOrEqualTo(CONNECTIONS);
        int first = kept.get(0);
        printForwardingOverhead(direct.subList(0, dead), slugs.get(first), instances.indexOf(ownerOf.get(first)));

        long idle = System.nanoTime();
        DockerContainers.awaitNoneWithLabel(RUN_LABEL, RUN, IDLE_TTL.plus(BOUND));
        System.out.printf("[ownership] no container %d ms after the last request (idle TTL %d s); most containers of one"
                + " connection at once: %s%n", Duration.ofNanos(System.nanoTime() - idle).toMillis(), IDLE_TTL.toSeconds(), mostAtOnce);
        sampler.shutdownNow();
        assertThat(mostAtOnce).as("connections seen with a container").hasSize(CONNECTIONS);
        assertThat(doubles).as("looks at the engine that found two containers of one connection (owners %s, killed %s at %s)",
                ownerOf, deadInstance, killedInstant).isEmpty();
        for (int connection = 0; connection < CONNECTIONS; connection++) {
            assertThat(instancesOf.get(connection)).as("replicas that ran connection %d's containers", connection)
                    .isSubsetOf(ownerOf.get(connection), heirOf.get(connection));
        }
    }

    /** The live {@code docker run} clients a replica started: their arguments carry its {@code tether.instance} label. */
    private static List<ProcessHandle> dockerRunClientsOf(String instance) {
        return OsProcesses.matching("tether.instance=" + instance).stream()
                .filter(process -> OsProcesses.commandLine(process.pid()).startsWith("docker")
                        || OsProcesses.commandLine(process.pid()).contains("/docker "))
                .toList();
    }

    /** A health check or a tool call of {@code slug}, by the parity of {@code turn}. */
    private static Mono<TetherClient.Reply> request(TetherClient client, String slug, int turn, String message) {
        return turn % 2 == 0 ? client.healthLater(slug) : client.exchange(HttpMethod.POST, "/api/tools/call", echo(slug, message));
    }

    private PackagedDaemon start(Path dataDir, Map<String, String> store) {
        try {
            PackagedDaemon daemon = PackagedDaemon.start(PackagedDaemon.jarOrSkip(), dataDir, List.of(
                    "--tether.api.token=" + TOKEN, "--tether.replicas.address=127.0.0.1",
                    "--tether.replicas.heartbeat=1s", "--tether.replicas.lease-ttl=" + LEASE_TTL.toSeconds() + "s",
                    "--tether.store.change-poll=200ms", "--tether.session.idle-ttl=" + IDLE_TTL.toSeconds() + "s"), store);
            daemons.add(daemon);
            return daemon;
        }
        catch (Exception ex) {
            throw new IllegalStateException("replica on " + dataDir + " did not start", ex);
        }
    }

    /**
     * One look at the engine: how many containers (not yet gone) each connection has, keeping the most seen, and which
     * replicas' ({@code tether.instance}) they are; a look that finds two of one connection is kept whole in
     * {@code doubles}, for the failure's reader.
     */
    private static void sample(Map<Integer, Integer> mostAtOnce, Map<Integer, Set<String>> instancesOf, List<String> doubles) {
        Map<Integer, List<Container>> now = new HashMap<>();
        for (Container container : DockerContainers.withLabel(RUN_LABEL, RUN)) {
            if (!"exited".equals(container.getState()) && !"dead".equals(container.getState())) {
                int connection = Integer.parseInt(container.getLabels().get(CONNECTION_LABEL));
                now.computeIfAbsent(connection, any -> new ArrayList<>()).add(container);
                instancesOf.computeIfAbsent(connection, any -> ConcurrentHashMap.newKeySet())
                        .add(container.getLabels().get("tether.instance"));
            }
        }
        now.forEach((connection, containers) -> {
            mostAtOnce.merge(connection, containers.size(), Math::max);
            if (containers.size() > 1) {
                doubles.add(Instant.now() + " connection " + connection + ": "
                        + containers.stream().map(DockerContainers::describe).toList());
            }
        });
    }

    private static Map<String, Object> echo(String slug, String message) {
        return Map.of("address", "tools." + slug + ".org.default.echo", "args", Map.of("message", message));
    }

    /** Warm tool calls one after another, through the owner and through another of {@code clients} that forwards them. */
    private static void printForwardingOverhead(List<TetherClient> clients, String slug, int owner) {
        TetherClient direct = clients.get(owner);
        TetherClient forwarded = clients.get((owner + 1) % clients.size());
        List<Long> directMs = new ArrayList<>();
        List<Long> forwardedMs = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            directMs.add(timedCall(direct, slug));
            forwardedMs.add(timedCall(forwarded, slug));
        }
        System.out.printf("[ownership] warm tool call p50: %.2f ms through the owner, %.2f ms through a peer that forwards"
                + " (p90 %.2f against %.2f)%n", percentile(directMs, 50), percentile(forwardedMs, 50),
                percentile(directMs, 90), percentile(forwardedMs, 90));
    }

    private static long timedCall(TetherClient client, String slug) {
        long start = System.nanoTime();
        assertThat(client.post("/api/tools/call", echo(slug, "timed")).status()).isEqualTo(200);
        return System.nanoTime() - start;
    }

    private static double percentile(List<Long> nanos, int percent) {
        List<Long> sorted = nanos.stream().sorted().toList();
        return sorted.get(Math.min(sorted.size() - 1, sorted.size() * percent / 100)) / 1e6;
    }
}
