package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.HaproxyRoundRobin;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresPostgres;

/**
 * Paused executions of the packaged daemon survive {@code kill -9}: on the embedded store, the daemon killed and started
 * again on its data dir; on PostgreSQL, two replicas behind Debian's HAProxy, one of them killed, its pauses resumed
 * through the other, for the REST API and for an agent over {@code /mcp} whose session was on the dead one. The
 * fixture server writes down every call it answers: the calls before a pause are never sent again, and the approved
 * call reaches it exactly once. And execution ids never repeat across two restarts of two replicas (the generator's
 * own collision check, on far more ids than HTTP could mint in the time, is {@code ReplicaIdsTest}).
 */
class DurableExecutionsIT {

    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final Duration LEASE_TTL = Duration.ofSeconds(6);
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

    /**
     * Pause, {@code kill -9}, start again on the same data dir: {@code GET} shows the pause, and {@code resume accept}
     * completes it with the tool's answer. The code made twenty calls before it paused and read the clock and
     * randomness all along: rebuilt, it logs again what the server received the first time.
     */
    @Test
    void aPauseSurvivesKillMinus9OfItsDaemonAndItsApprovedCallRunsOnce() throws Exception {
        Path dataDir = dir.resolve("data");
        Path calls = dir.resolve("calls.jsonl");
        PackagedDaemon first = start(dataDir, List.of(), Map.of());
        TetherClient before = new TetherClient(first.port(), first.token());
        String tools = "tools." + before.registerAndSync("fx", Fixture.command("--calls=" + calls)) + ".org.default";
        JsonNode paused = paused(before, DurableRuns.TWENTY_CALLS.formatted(tools));
        String id = paused.path("structured").path("executionId").asString();
        List<String> firstRun = DurableRuns.echoed(calls);
        assertThat(firstRun).hasSize(20);

        first.kill();
        PackagedDaemon second = start(dataDir, List.of(), Map.of());
        TetherClient after = new TetherClient(second.port(), second.token());
        Reply shown = after.get("/api/executions/" + id);
        assertThat(shown.status()).as(shown.toString()).isEqualTo(200);
        assertThat(shown.json().path("structured").path("status").asString()).isEqualTo("waiting_for_interaction");
        assertThat(shown.json().path("text").asString()).isEqualTo(paused.path("text").asString());

        long resuming = System.nanoTime();
        JsonNode done = resume(after, id);
        System.out.printf("[durable] after kill -9 and a start on the same data dir: a pause with 20 recorded calls resumed "
                + "in %d ms (rebuilt by replay, the approved call included)%n", (System.nanoTime() - resuming) / 1_000_000);
        assertThat(done.path("isError").asBoolean()).as(done.toString()).isFalse();
        List<String> logs = done.path("structured").path("logs").valueStream().map(JsonNode::asString).toList();
        assertThat(logs.subList(0, 20)).as("the replay's logs against the first run's calls")
                .containsExactlyElementsOf(firstRun.stream().map(line -> "[log] " + line).toList());
        assertThat(logs.get(20)).isEqualTo("[log] approved nothing was deleted (fixture)");
        assertThat(names(calls)).as("what reached the server over both runs").hasSize(21)
                .containsOnlyOnce("delete_everything").last().isEqualTo("delete_everything");
        assertThat(after.get("/api/executions/" + id).status()).isEqualTo(404);
    }

    /**
     * An agent of MCP 2026-07-28 gets {@code input_required} for an approval and a {@code requestState}; the daemon is
     * killed with {@code kill -9} and started again on its data dir. The agent's retry, carrying nothing but that state
     * and its answer, completes the execution from its journal: the state names the durable execution, and its seal's
     * key comes from the store key, which the restart kept. The approved call reaches the server once.
     */
    @Test
    void aRetryOfMcp20260728ResumesItsPauseAfterKillMinus9() throws Exception {
        Path dataDir = dir.resolve("data");
        Path calls = dir.resolve("calls.jsonl");
        PackagedDaemon first = start(dataDir, List.of(), Map.of());
        TetherClient before = new TetherClient(first.port(), first.token());
        String slug = before.registerAndSync("fx", Fixture.command("--calls=" + calls));
        Map<String, Object> code = Map.of("code", "return await tools." + slug + ".org.default.delete_everything({})");
        JsonNode asked = new DurableRuns.StatelessAgent(before.baseUrl() + "/mcp", first.token()).call("execute", code);
        assertThat(asked.path("result").path("resultType").asString()).as(asked.toString()).isEqualTo("input_required");
        assertThat(names(calls)).as("nothing sent before the approval").isEmpty();

        first.kill();
        PackagedDaemon second = start(dataDir, List.of(), Map.of());
        JsonNode done = new DurableRuns.StatelessAgent("http://127.0.0.1:" + second.port() + "/mcp", second.token())
                .retry("execute", code, asked, Map.of("action", "accept", "content", Map.of()));
        assertThat(done.path("result").path("resultType").asString()).as(done.toString()).isEqualTo("complete");
        assertThat(done.path("result").path("isError").asBoolean()).as(done.toString()).isFalse();
        assertThat(names(calls)).as("what reached the server").containsExactly("delete_everything");
    }

    /**
     * Two replicas on one PostgreSQL behind HAProxy. An execution paused on A through the API, and one an agent paused
     * over {@code /mcp} with its session on A; then {@code kill -9} of A. Through HAProxy (so through B): the first is
     * shown and resumed, the agent's old session is unknown, and from a new session its {@code resume} completes the
     * other. Each approved call reaches the server once.
     */
    @Test
    @RequiresPostgres
    void pausesOfAReplicaKilledWithMinus9AreResumedThroughTheOther() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        Map<String, String> store = postgres.daemonEnvironment(postgres.createSchema("durable"));
        String token = "durable-it-" + UUID.randomUUID();
        List<String> settings = replicaSettings(token);
        List<Integer> ports = List.of(Fixture.freeLoopbackPort(), Fixture.freeLoopbackPort());
        List<PackagedDaemon> ab = startTwo(ports, settings, store);
        PackagedDaemon a = ab.get(0);
        PackagedDaemon b = ab.get(1);
        haproxy = HaproxyRoundRobin.startForRollingRestarts(dir.resolve("haproxy"), ports);
        TetherClient balanced = new TetherClient(haproxy.port(), token);
        TetherClient onA = new TetherClient(a.port(), token);
        Path calls = dir.resolve("calls.jsonl");
        String slug = balanced.registerAndSync("fx", Fixture.command("--calls=" + calls));
        assertThat(balanced.post("/api/policies", Map.of("owner", "org", "pattern", slug + ".org.default.echo",
                "action", "require_approval")).status()).isEqualTo(200);

        JsonNode paused = paused(onA, "return await tools." + slug + ".org.default.echo({text: 'paused on A'})");
        String id = paused.path("structured").path("executionId").asString();
        assertThat(id).matches("exec_" + a.instanceId() + "_[a-z2-7]{26}");
        DurableRuns.Agent agent = new DurableRuns.Agent("http://127.0.0.1:" + haproxy.port() + "/mcp", token);
        String session = agent.initializeOn(a.instanceId());
        JsonNode agentPaused = agent.call(session, "execute", Map.of("code", "return await tools." + slug
                + ".org.default.echo({text: 'the agent paused on A'})"));
        String agentsId = agentPaused.at("/result/structuredContent/executionId").asString();
        assertThat(agentsId).as(agentPaused.toString()).startsWith("exec_" + a.instanceId() + "_");

        a.kill();
        long killed = System.nanoTime();
        Reply shown = balanced.get("/api/executions/" + id);
        assertThat(shown.status()).as("shown at once, from the store: " + shown).isEqualTo(200);
        assertThat(shown.json().path("text").asString()).isEqualTo(paused.path("text").asString());
        // The approved call goes to its connection's owner, which may be A until A's lease runs out (then B owns it).
        TetherClient onB = new TetherClient(b.port(), token);
        Await.until(() -> onB.metrics().sum("tether_replicas_live") == 1, BOUND, () -> "B sees A's lease gone");
        long leaseGone = System.nanoTime();
        JsonNode done = resume(balanced, id);
        System.out.printf("[durable] kill -9 of replica A: its lease gone for B after %d ms; its pause then resumed through "
                + "HAProxy by B in %d ms%n", (leaseGone - killed) / 1_000_000, (System.nanoTime() - leaseGone) / 1_000_000);
        assertThat(done.path("structured").path("result").path("data").path("content").get(0).path("text").asString())
                .isEqualTo("paused on A");

        assertThat(agent.send(session, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}").statusCode())
                .as("the agent's session died with A").isEqualTo(404);
        String again = agent.initialize();
        JsonNode agentDone = agent.call(again, "resume", Map.of("executionId", agentsId, "action", "accept"));
        assertThat(agentDone.at("/result/structuredContent/status").asString()).as(agentDone.toString()).isEqualTo("completed");
        assertThat(agentDone.toString()).contains("the agent paused on A");
        assertThat(texts(calls)).as("each approved call reached the server once")
                .containsExactlyInAnyOrder("paused on A", "the agent paused on A");
        assertThat(b.metrics().sum("tether_executions_rebuilt_total", "outcome", "resumed")).isEqualTo(2);
    }

    /**
     * 300 executions paused and ended across two restarts of two replicas: no id twice, none {@code exec_<n>}, each
     * naming its replica. What could repeat an id is a counter or a seed that starts again with a replica, which the
     * first ids after a restart would show (a hundred per generation are many more than such a repeat needs); that the
     * random part never collides is checked on the generator itself ({@code ReplicaIdsTest}), on 200,000 ids.
     */
    @Test
    @RequiresPostgres
    void pausesAcrossTwoRestartsOfTwoReplicasHaveNoIdTwice() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        Map<String, String> store = postgres.daemonEnvironment(postgres.createSchema("ids"));
        String token = "ids-it-" + UUID.randomUUID();
        List<String> settings = replicaSettings(token);
        List<Integer> ports = List.of(Fixture.freeLoopbackPort(), Fixture.freeLoopbackPort());
        Set<String> ids = Collections.synchronizedSet(new HashSet<>());
        List<String> all = Collections.synchronizedList(new ArrayList<>());
        String slug = null;
        int generations = 3;
        int total = 300;
        for (int generation = 0; generation < generations; generation++) {
            int generationsLeft = generations - generation;
            List<PackagedDaemon> ab = startTwo(ports, settings, store);
            PackagedDaemon a = ab.get(0);
            PackagedDaemon b = ab.get(1);
            List<TetherClient> replicas = List.of(new TetherClient(a.port(), token), new TetherClient(b.port(), token));
            if (slug == null) {
                slug = replicas.get(0).registerAndSync("fx", Fixture.command());
            }
            int count = (total - all.size()) / generationsLeft;
            String code = "return await tools." + slug + ".org.default.delete_everything({})";
            long started = System.nanoTime();
            ExecutorService clients = Executors.newFixedThreadPool(8);
            List<Future<?>> work = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                TetherClient replica = replicas.get(i % 2);
                String itsName = "exec_" + ab.get(i % 2).instanceId() + "_";
                work.add(clients.submit(() -> {
                    String id = paused(replica, code).path("structured").path("executionId").asString();
                    assertThat(id).as("named for the replica that paused it").startsWith(itsName);
                    all.add(id);
                    ids.add(id);
                    Reply ended = replica.post("/api/executions/" + id + "/resume", Map.of("action", "cancel"));
                    assertThat(ended.status()).as(ended.toString()).isEqualTo(200);
                }));
            }
            for (Future<?> done : work) {
                done.get();
            }
            clients.shutdown();
            System.out.printf("[durable] generation %d: %d executions paused and cancelled on two replicas in %d ms%n",
                    generation, count, (System.nanoTime() - started) / 1_000_000);
            a.terminate();
            b.terminate();
            a.stop();
            b.stop();
        }
        assertThat(all).hasSize(total);
        assertThat(ids).as("distinct ids").hasSize(total);
        assertThat(all).noneMatch(id -> id.matches("exec_\\d+")).allMatch(id -> id.matches("exec_[0-9a-f]{8}_[a-z2-7]{26}"));
    }

    // ---- helpers ---------------------------------------------------------------------------------

    private static List<String> replicaSettings(String token) {
        return List.of("--tether.api.token=" + token, "--tether.replicas.address=127.0.0.1", "--tether.replicas.heartbeat=1s",
                "--tether.replicas.lease-ttl=" + LEASE_TTL.toSeconds() + "s", "--tether.replicas.drain-delay=0s",
                "--tether.store.change-poll=200ms", "--tether.execution.max-paused=256",
                // every replica seals with the same key (docs/kubernetes.md): each opens the others' journals
                "--tether.store.secret-key=" + Base64.getEncoder().encodeToString(UUID.randomUUID().toString().substring(0, 32).getBytes()));
    }

    private PackagedDaemon start(Path dataDir, List<String> settings, Map<String, String> environment) throws IOException, InterruptedException {
        PackagedDaemon daemon = PackagedDaemon.start(PackagedDaemon.jarOrSkip(), dataDir, settings, environment);
        daemons.add(daemon);
        return daemon;
    }

    /** Replicas A and B on {@code ports}, started side by side. */
    private List<PackagedDaemon> startTwo(List<Integer> ports, List<String> settings, Map<String, String> store) {
        CompletableFuture<PackagedDaemon> b = CompletableFuture.supplyAsync(() -> startOn(ports.get(1), dir.resolve("b"), settings, store));
        PackagedDaemon a = startOn(ports.get(0), dir.resolve("a"), settings, store);
        return List.of(a, b.join());
    }

    private PackagedDaemon startOn(int port, Path dataDir, List<String> settings, Map<String, String> store) {
        try {
            PackagedDaemon daemon = PackagedDaemon.startOn(port, PackagedDaemon.jarOrSkip(), dataDir, settings, store);
            daemons.add(daemon);
            return daemon;
        }
        catch (IOException | InterruptedException ex) {
            throw new IllegalStateException("replica on " + dataDir + " did not start", ex);
        }
    }

    private static JsonNode paused(TetherClient tether, String code) {
        Reply reply = tether.post("/api/executions", Map.of("code", code));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        assertThat(reply.json().path("status").asString()).as(reply.toString()).isEqualTo("paused");
        return reply.json();
    }

    private static JsonNode resume(TetherClient tether, String id) {
        Reply reply = tether.post("/api/executions/" + id + "/resume", Map.of("action", "accept"));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        assertThat(reply.json().path("status").asString()).as(reply.toString()).isEqualTo("completed");
        return reply.json();
    }

    private static List<String> names(Path calls) throws IOException {
        return DurableRuns.calls(calls).stream().map(call -> call.path("name").asString()).toList();
    }

    private static List<String> texts(Path calls) throws IOException {
        return DurableRuns.calls(calls).stream().map(call -> call.path("arguments").path("text").asString()).toList();
    }
}
