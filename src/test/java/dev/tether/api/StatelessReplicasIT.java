package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.testsupport.Await;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.HaproxyRoundRobin;
import dev.tether.testsupport.NodeClients;
import dev.tether.testsupport.NodeClients.Ended;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.PythonClients;
import dev.tether.testsupport.RequiresPostgres;
import dev.tether.testsupport.RequiresTestClients;

/**
 * MCP 2026-07-28 through a load balancer with no stickiness at all: three packaged replicas on one PostgreSQL behind
 * Debian's HAProxy, round robin per request. The Python SDK, pinned to 2026-07-28, runs {@code execute} on code that
 * needs approval; the execution pauses on the replica that ran it, and the SDK's retry with the user's answer goes
 * wherever HAProxy sends it. The test repeats until a retry has landed on a replica other than the execution's (that
 * replica then passes the resume to the execution's, which its {@code tether_replicas_forwarded_total} counts) and
 * checks that every retry completed, wherever it landed.
 */
@RequiresPostgres
@RequiresTestClients
class StatelessReplicasIT {

    private static final String TOKEN = "stateless-replicas-" + UUID.randomUUID();
    private static final int REPLICAS = 3;
    private static final int ATTEMPTS = 6;
    private static final Duration BOUND = Duration.ofSeconds(90);
    private static final String NEEDS_APPROVAL = "return await tools.executor.onepassword.removeConfig({})";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    private final List<PackagedDaemon> daemons = Collections.synchronizedList(new ArrayList<>());
    private HaproxyRoundRobin haproxy;

    @AfterEach
    void stop() throws InterruptedException {
        if (haproxy != null) {
            haproxy.close();
        }
        PackagedDaemon.closeAll(daemons);
    }

    @Test
    void anApprovalRetryLandsOnAnotherReplicaAndCompletes() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        Map<String, String> store = new HashMap<>(postgres.daemonEnvironment(postgres.createSchema("stateless")));
        // the replicas of one store share its key, as docs/kubernetes.md has it: every one opens the stored secrets
        // and every one opens a requestState another sealed
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        store.put("TETHER_STORE_SECRET_KEY", Base64.getEncoder().encodeToString(key));
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < REPLICAS; i++) {
            ports.add(Fixture.freeLoopbackPort());
        }
        // the first alone: after a build, the launcher's first start trains its start-up cache, which the others then use
        List<PackagedDaemon> replicas = new ArrayList<>(List.of(start(ports.get(0), dir.resolve("replica-0"), store)));
        List<CompletableFuture<PackagedDaemon>> starting = new ArrayList<>();
        for (int i = 1; i < REPLICAS; i++) {
            int port = ports.get(i);
            Path dataDir = dir.resolve("replica-" + i);
            starting.add(CompletableFuture.supplyAsync(() -> start(port, dataDir, store), PackagedDaemon.SIDE_BY_SIDE));
        }
        starting.stream().map(CompletableFuture::join).forEach(replicas::add);
        haproxy = HaproxyRoundRobin.start(dir.resolve("haproxy"), ports);
        List<TetherClient> direct = ports.stream().map(port -> new TetherClient(port, TOKEN)).toList();
        Await.until(() -> direct.stream().allMatch(client -> client.metrics().sum("tether_replicas_live") == REPLICAS), BOUND,
                () -> "every replica sees the three leases");

        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            Map<String, Double> before = forwarded(replicas);
            Map<String, JsonNode> steps = python(haproxy.port());
            assertThat(steps).as("attempt %d", attempt).containsKey("asked");
            JsonNode result = steps.get("result").path("result");
            assertThat(result.path("resultType").asString()).as("attempt %d: %s", attempt, result).isEqualTo("complete");
            assertThat(result.path("structuredContent").path("result").toString()).as("attempt %d", attempt)
                    .isEqualTo("{\"ok\":true,\"data\":{\"removed\":true}}");
            Map<String, Double> after = forwarded(replicas);
            List<String> passedOn = after.keySet().stream().filter(replica -> after.get(replica) > before.get(replica)).toList();
            if (!passedOn.isEmpty()) {
                System.out.printf("[stateless] attempt %d: the retry landed on %s, which passed it to the execution's replica;"
                        + " completed%n", attempt, passedOn);
                assertThat(passedOn).hasSize(1);
                return;
            }
            System.out.printf("[stateless] attempt %d: the retry landed on the execution's own replica; completed%n", attempt);
        }
        throw new AssertionError("no retry of " + ATTEMPTS + " landed on a replica other than its execution's");
    }

    /** Requests each replica passed to another (by instance id): here, only resumes of executions held elsewhere. */
    private static Map<String, Double> forwarded(List<PackagedDaemon> replicas) throws Exception {
        Map<String, Double> forwarded = new LinkedHashMap<>();
        for (PackagedDaemon replica : replicas) {
            forwarded.put(replica.instanceId(), replica.metrics().sum("tether_replicas_forwarded_total"));
        }
        return forwarded;
    }

    private static Map<String, JsonNode> python(int port) throws Exception {
        try (NodeClients.Run run = PythonClients.run("mcp_agent.py", List.of("--url=http://127.0.0.1:" + port + "/mcp",
                "--token=" + TOKEN, "--mode=2026-07-28", "--code=" + NEEDS_APPROVAL))) {
            Ended ended = run.awaitExit(BOUND);
            Map<String, JsonNode> steps = new LinkedHashMap<>();
            for (String line : ended.stdout()) {
                JsonNode step = JSON.readTree(line);
                steps.put(step.path("step").asString(), step);
            }
            assertThat(ended.exitCode()).as("%s; stderr: %s", ended.stdout(), ended.stderr()).isZero();
            return steps;
        }
    }

    private PackagedDaemon start(int port, Path dataDir, Map<String, String> store) {
        try {
            PackagedDaemon daemon = PackagedDaemon.startOn(port, PackagedDaemon.jarOrSkip(), dataDir, List.of(
                    "--tether.api.token=" + TOKEN, "--tether.replicas.address=127.0.0.1",
                    "--tether.replicas.heartbeat=1s", "--tether.store.change-poll=200ms"), store);
            daemons.add(daemon);
            return daemon;
        }
        catch (Exception ex) {
            throw new IllegalStateException("replica on " + dataDir + " did not start", ex);
        }
    }
}
