package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import com.github.dockerjava.api.model.Container;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpMethod;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

import dev.tether.testsupport.Await;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.HaproxyRoundRobin;
import dev.tether.testsupport.OsProcesses;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresDocker;
import dev.tether.testsupport.RequiresPostgres;
import dev.tether.testsupport.RunsAlone;

/**
 * A rolling restart under load: three packaged daemons on one PostgreSQL and one Docker engine behind Debian's HAProxy,
 * round robin, configured by deploy/haproxy.cfg itself, the file docs/kubernetes.md gives an operator (health checks on
 * readiness, a refused connection tried on another replica). A few clients call tools on docker-backed connections through HAProxy without pause
 * while each replica in turn gets SIGTERM, exits, starts again on its port and becomes ready. No call fails: a
 * stopping replica turns unready, hands its connections over and passes what still reaches it to their new owners,
 * a peer whose forward it refuses goes to the new owner, and it stops listening only once HAProxy has stopped sending
 * it calls, each of its answers meanwhile closing its connection, so no call crosses the close of its port. Each replica exits within the drain bound with 0 or 143
 * (the JVM's status after SIGTERM), never two containers of one connection show in the engine (sampled every 200 ms),
 * and once all are stopped no container and no {@code docker run} client is left.
 * Then, on the restarted cluster, an agent over {@code /mcp} through HAProxy has an execution paused for approval and
 * resumed through another replica. Prints how long ownership took to move after each SIGTERM, for
 * docs/performance.md.
 */
@RequiresDocker
@RequiresPostgres
@RunsAlone
class RollingRestartIT {

    private static final String TOKEN = "rolling-it-" + UUID.randomUUID();
    private static final String RUN = UUID.randomUUID().toString().substring(0, 12);
    private static final String RUN_LABEL = "tether.test.run";
    private static final String CONNECTION_LABEL = "tether.test.connection";
    private static final int REPLICAS = 3;
    private static final int CONNECTIONS = 6;
    private static final int CLIENTS = 4;
    private static final Duration LEASE_TTL = Duration.ofSeconds(6);
    private static final Duration DRAIN_DELAY = Duration.ofSeconds(2);
    /** How long a step may take before the test calls it stuck: no speed is judged by it (the figures are printed). */
    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final Duration SAMPLE = Duration.ofMillis(200);

    @TempDir
    Path dir;

    private final List<PackagedDaemon> daemons = Collections.synchronizedList(new ArrayList<>());
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
    private HaproxyRoundRobin haproxy;
    private Disposable load;

    @AfterEach
    void stop() throws InterruptedException {
        sampler.shutdownNow();
        if (load != null) {
            load.dispose();
        }
        if (haproxy != null) {
            haproxy.close();
        }
        for (PackagedDaemon daemon : daemons) {
            daemon.close();
            try (var lines = Files.lines(daemon.log())) {
                lines.filter(line -> line.contains("drain") || line.contains("replicas alive") || line.contains("lease")
                        || line.contains("retired") || line.contains("ConnectionFence") || line.contains("WARN") || line.contains("ERROR"))
                        .forEach(line -> System.out.println("[rolling] " + daemon.log().getParent().getFileName() + "/"
                                + daemon.log().getFileName() + ": " + line));
            }
            catch (IOException unreadable) {
                System.out.println("[rolling] cannot read " + daemon.log() + ": " + unreadable);
            }
        }
        DockerContainers.awaitNoneWithLabel(RUN_LABEL, RUN, Duration.ofSeconds(30));
    }

    @Test
    void sigtermOfOneReplicaAtATimeUnderSteadyToolCallsFailsNoCallAndStrandsNothing() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        Map<String, String> store = postgres.daemonEnvironment(postgres.createSchema("rolling"));
        List<Path> dataDirs = new ArrayList<>();
        List<Integer> ports = new ArrayList<>();
        List<CompletableFuture<PackagedDaemon>> starting = new ArrayList<>();
        for (int i = 0; i < REPLICAS; i++) {
            Path dataDir = dir.resolve("replica-" + i);
            int port = Fixture.freeLoopbackPort();
            dataDirs.add(dataDir);
            ports.add(port);
            starting.add(CompletableFuture.supplyAsync(() -> start(port, dataDir, store), PackagedDaemon.SIDE_BY_SIDE));
        }
        List<PackagedDaemon> replicas = new ArrayList<>(starting.stream().map(CompletableFuture::join).toList());
        haproxy = HaproxyRoundRobin.startForRollingRestarts(dir.resolve("haproxy"), ports);
        TetherClient balanced = new TetherClient(haproxy.port(), TOKEN);
        awaitAllSeeEveryLease(ports);

        List<String> slugs = new ArrayList<>();
        for (int i = 0; i < CONNECTIONS; i++) {
            slugs.add(balanced.register("rolling-" + i, Fixture.everythingDockerCommand(
                    List.of("--label", RUN_LABEL + "=" + RUN, "--label", CONNECTION_LABEL + "=" + i))));
        }
        for (String slug : slugs) {
            TetherClient.Reply warm = balanced.post("/api/tools/call", echo(slug, "warm"));
            assertThat(warm.status()).as("first call of %s: %s", slug, warm).isEqualTo(200);
        }

        // Steady load: each client calls the next connection as soon as its last call is answered.
        AtomicLong answered = new AtomicLong();
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean loading = new AtomicBoolean(true);
        load = Flux.range(0, CLIENTS)
                .flatMap(client -> Flux.range(0, Integer.MAX_VALUE)
                        .takeWhile(turn -> loading.get())
                        .concatMap(turn -> {
                            String slug = slugs.get((client + turn) % CONNECTIONS);
                            return balanced.exchange(HttpMethod.POST, "/api/tools/call", echo(slug, "c" + client + "t" + turn))
                                    .timeout(BOUND)
                                    .doOnNext(reply -> {
                                        if (reply.status() == 200 && reply.body().contains("c" + client + "t" + turn)) {
                                            answered.incrementAndGet();
                                        }
                                        else {
                                            failures.add(slug + ": " + reply);
                                        }
                                    })
                                    .onErrorResume(error -> {
                                        failures.add(slug + ": " + error);
                                        return Mono.empty();
                                    });
                        }), CLIENTS)
                .subscribe();
        Await.until(() -> answered.get() >= 2L * CONNECTIONS, BOUND, () -> "the load is under way");
        // On one engine the fence keeps a handover to one container: the new owner waits for the stopping replica's.
        AtomicLong samples = new AtomicLong();
        AtomicLong doubled = new AtomicLong();
        List<String> doubles = Collections.synchronizedList(new ArrayList<>());
        sampler.scheduleWithFixedDelay(() -> {
            samples.incrementAndGet();
            Map<String, List<Container>> byConnection = DockerContainers.withLabel(RUN_LABEL, RUN).stream()
                    .filter(RollingRestartIT::running)
                    .collect(Collectors.groupingBy(container -> container.getLabels().get(CONNECTION_LABEL)));
            byConnection.forEach((connection, containers) -> {
                if (containers.size() > 1) {
                    doubles.add(Instant.now() + " connection " + connection + ": "
                            + containers.stream().map(DockerContainers::describe).toList());
                }
            });
            if (byConnection.values().stream().anyMatch(containers -> containers.size() > 1)) {
                doubled.incrementAndGet();
            }
        }, 0, SAMPLE.toMillis(), TimeUnit.MILLISECONDS);

        for (int i = 0; i < REPLICAS; i++) {
            PackagedDaemon leaving = replicas.get(i);
            String instance = leaving.instanceId();
            Set<Integer> owned = connectionsRunningOn(instance);
            long before = answered.get();
            long signalled = System.nanoTime();
            CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> terminate(leaving));
            // Ownership has moved once each of its connections' calls run a child on another replica.
            Await.until(() -> owned.stream().allMatch(connection -> runsElsewhere(connection, instance)), BOUND,
                    () -> "connections " + owned + " of replica " + instance + " served by another replica");
            Duration moved = Duration.ofNanos(System.nanoTime() - signalled);
            int status = exit.join();
            Duration exited = Duration.ofNanos(System.nanoTime() - signalled);
            assertThat(status).as("exit status of replica %d after SIGTERM", i).isIn(0, 143);
            assertThat(DockerContainers.withLabel("tether.instance", instance).stream().filter(RollingRestartIT::running).toList())
                    .as("containers of replica %d once it has exited", i).isEmpty();
            System.out.printf("[rolling] SIGTERM of replica %d (%d of %d connections its own): ownership moved in %d ms, exit %d"
                    + " after %d ms, %d calls answered meanwhile%n", i, owned.size(), CONNECTIONS, moved.toMillis(), status,
                    exited.toMillis(), answered.get() - before);

            long restarted = System.nanoTime();
            replicas.set(i, start(ports.get(i), dataDirs.get(i), store));
            awaitAllSeeEveryLease(ports);
            System.out.printf("[rolling] replica %d ready again %d ms after its start%n", i,
                    Duration.ofNanos(System.nanoTime() - restarted).toMillis());
            long afterRestart = answered.get();
            Await.until(() -> answered.get() >= afterRestart + CONNECTIONS, BOUND, () -> "calls go on after the restart");
        }
        loading.set(false);
        Await.until(load::isDisposed, BOUND, () -> "the clients' last calls are answered");
        sampler.shutdownNow();
        System.out.printf("[rolling] %d calls answered through HAProxy during three rolling restarts, %d failed; a connection"
                + " had two containers in %d of %d samples (every %d ms)%n", answered.get(), failures.size(), doubled.get(),
                samples.get(), SAMPLE.toMillis());
        assertThat(failures).as("calls that failed").isEmpty();
        assertThat(doubles).as("looks at the engine that found two containers of one connection").isEmpty();

        anAgentsPausedExecutionIsResumedThroughAnotherReplica(balanced, replicas, slugs.get(0));

        for (PackagedDaemon replica : replicas) {
            assertThat(terminate(replica)).as("exit status after SIGTERM").isIn(0, 143);
        }
        assertThat(DockerContainers.withLabel(RUN_LABEL, RUN).stream().filter(RollingRestartIT::running).toList())
                .as("containers once every replica has stopped").isEmpty();
        OsProcesses.awaitNoneMatching(RUN_LABEL + "=" + RUN, Duration.ofSeconds(5));
    }

    /**
     * An agent over {@code /mcp} through HAProxy: its session lives on the replica that answered its {@code initialize},
     * an {@code execute} pauses there for approval, and a {@code resume} that HAProxy sends to another replica is
     * passed to it and completes. Round robin decides where each request lands, so the agent pauses and resumes until
     * a resume has landed elsewhere: at most one per replica, as each attempt moves the rotation by two requests.
     */
    private static void anAgentsPausedExecutionIsResumedThroughAnotherReplica(TetherClient balanced, List<PackagedDaemon> replicas,
            String slug) throws Exception {
        assertThat(balanced.post("/api/policies", Map.of("owner", "org", "pattern", slug + ".org.default.echo", "action",
                "require_approval")).status()).isEqualTo(200);
        String base = balanced.baseUrl();
        HttpResponse<String> opened = mcp(base, null, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"rolling-agent\",\"version\":\"1\"}}}");
        assertThat(opened.statusCode()).as(opened.body()).isEqualTo(200);
        String session = opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
        String home = session.substring(0, session.indexOf('.'));
        for (int attempt = 0; attempt < REPLICAS; attempt++) {
            JsonNode paused = rpc(mcp(base, session, call(10 + 2 * attempt, "execute", Map.of("code",
                    "return await tools['" + slug + "'].org.default.echo({message: 'approved " + attempt + "'})"))));
            String execution = paused.at("/result/structuredContent/executionId").asString();
            assertThat(execution).as("paused: %s", paused).startsWith("exec_" + home + "_");
            double forwardedBefore = forwardedByOthers(replicas, home);
            JsonNode resumed = rpc(mcp(base, session, call(11 + 2 * attempt, "resume", Map.of("executionId", execution,
                    "action", "accept"))));
            assertThat(resumed.toString()).as("resumed").contains("approved " + attempt);
            if (forwardedByOthers(replicas, home) > forwardedBefore) {
                System.out.printf("[rolling] an agent's execution paused on %s, resumed through another replica (attempt %d)%n",
                        home, attempt + 1);
                return;
            }
        }
        throw new AssertionError("no resume of " + REPLICAS + " landed on a replica other than " + home);
    }

    /** Requests passed to their home or owner by the replicas other than {@code home}. */
    private static double forwardedByOthers(List<PackagedDaemon> replicas, String home) throws Exception {
        double forwarded = 0;
        for (PackagedDaemon replica : replicas) {
            if (!home.equals(replica.instanceId())) {
                forwarded += replica.metrics().sum("tether_replicas_forwarded_total");
            }
        }
        return forwarded;
    }

    private static String call(int id, String tool, Map<String, Object> arguments) {
        return TetherClient.JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "id", id, "method", "tools/call", "params",
                Map.of("name", tool, "arguments", arguments)));
    }

    /** One request on a connection of its own, so that HAProxy balances it afresh. */
    private static HttpResponse<String> mcp(String base, String session, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + "/mcp"))
                .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream").timeout(BOUND)
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The JSON-RPC answer of a response, sent as JSON or as the last {@code data:} of an event stream. */
    private static JsonNode rpc(HttpResponse<String> response) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        String body = response.body().strip();
        if (!body.startsWith("{")) {
            List<String> data = body.lines().filter(line -> line.startsWith("data:")).map(line -> line.substring(5).strip()).toList();
            body = data.get(data.size() - 1);
        }
        return TetherClient.JSON.readTree(body);
    }

    private PackagedDaemon start(int port, Path dataDir, Map<String, String> store) {
        try {
            PackagedDaemon daemon = PackagedDaemon.startOn(port, PackagedDaemon.jarOrSkip(), dataDir, List.of(
                    "--tether.api.token=" + TOKEN, "--tether.replicas.address=127.0.0.1",
                    "--tether.replicas.heartbeat=1s", "--tether.replicas.lease-ttl=" + LEASE_TTL.toSeconds() + "s",
                    "--tether.replicas.drain-delay=" + DRAIN_DELAY.toSeconds() + "s",
                    "--tether.store.change-poll=200ms", "--tether.session.idle-ttl=10s"), store);
            daemons.add(daemon);
            return daemon;
        }
        catch (Exception ex) {
            throw new IllegalStateException("replica on " + dataDir + " did not start", ex);
        }
    }

    private static int terminate(PackagedDaemon daemon) {
        try {
            return daemon.terminate(BOUND);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** Until every replica is ready (its readiness includes its lease) and counts the three leases. */
    private static void awaitAllSeeEveryLease(List<Integer> ports) {
        List<TetherClient> direct = ports.stream().map(port -> new TetherClient(port, TOKEN)).toList();
        Await.until(() -> direct.stream().allMatch(client -> client.get("/actuator/health/readiness").status() == 200
                        && client.metrics().sum("tether_replicas_live") == REPLICAS), BOUND,
                () -> "every replica is ready and sees the three leases");
    }

    /** The connections (by their label) with a running container of {@code instance}. */
    private static Set<Integer> connectionsRunningOn(String instance) {
        return DockerContainers.withLabel(RUN_LABEL, RUN).stream()
                .filter(RollingRestartIT::running)
                .filter(container -> instance.equals(container.getLabels().get("tether.instance")))
                .map(container -> Integer.parseInt(container.getLabels().get(CONNECTION_LABEL)))
                .collect(Collectors.toCollection(ConcurrentHashMap::newKeySet));
    }

    private static boolean runsElsewhere(int connection, String instance) {
        return DockerContainers.withLabel(CONNECTION_LABEL, Integer.toString(connection)).stream()
                .filter(RollingRestartIT::running)
                .anyMatch(container -> RUN.equals(container.getLabels().get(RUN_LABEL))
                        && !instance.equals(container.getLabels().get("tether.instance")));
    }

    private static boolean running(Container container) {
        return !"exited".equals(container.getState()) && !"dead".equals(container.getState());
    }

    private static Map<String, Object> echo(String slug, String message) {
        return Map.of("address", "tools." + slug + ".org.default.echo", "args", Map.of("message", message));
    }
}
