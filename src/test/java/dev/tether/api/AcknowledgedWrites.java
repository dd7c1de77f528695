package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

import org.springframework.http.HttpMethod;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;

/**
 * The rounds {@link AcknowledgedWritesIT} (embedded H2 store) and {@link AcknowledgedWritesOnPostgresIT} run, one class
 * per store so that failsafe's two forks run them side by side. A {@code 2xx} means the write is kept: the packaged
 * daemon is killed with SIGKILL in the middle of a burst of 20 concurrent writes (servers, connections with a
 * credential, policies), four rounds on one data dir, and every write it had answered {@code 2xx} is there after the
 * next start. The kill comes after a random number of the burst's answers, drawn in each round from its own quarter
 * of the burst, so every run kills early, midway and late in a burst, with some writes always still in flight
 * (issue 18: with H2's default commit delay, a third of the acknowledged writes were lost, which any one round shows).
 */
final class AcknowledgedWrites implements AutoCloseable {

    private static final int ROUNDS = 4;
    private static final int BURST = 20;

    /** One write of a burst: the request, and how to find what it wrote in the restarted daemon's listings. */
    private record Write(String kind, String name, Function<TetherClient, Mono<Reply>> request) {
    }

    private final Path dataDir;
    private final List<PackagedDaemon> daemons = new ArrayList<>();

    /** Rounds on one data dir, {@code dataDir}; {@link #close} stops the daemon the last round started. */
    AcknowledgedWrites(Path dataDir) {
        this.dataDir = dataDir;
    }

    @Override
    public void close() throws InterruptedException {
        for (PackagedDaemon daemon : daemons) {
            daemon.close();
        }
    }

    /** The rounds, on the store {@code store} names (the daemon's environment; empty for the embedded one). */
    void keepsEveryAcknowledgedWrite(Map<String, String> store) throws Exception {
        List<Write> acknowledged = Collections.synchronizedList(new ArrayList<>());
        int inFlightAtKill = 0;
        PackagedDaemon daemon = start(store);
        for (int round = 0; round < ROUNDS; round++) {
            TetherClient tether = new TetherClient(daemon.port(), daemon.token());
            String base = "base" + round;
            assertThat(tether.register(base, Fixture.command())).isEqualTo(base);
            acknowledged.add(new Write("integration", base, null));
            List<Write> burst = burst(round, base);
            int killAfter = killPoint(round);
            CountDownLatch answers = new CountDownLatch(killAfter);
            List<Write> answered = Collections.synchronizedList(new ArrayList<>());
            Disposable running = Flux.fromIterable(burst)
                    .flatMap(write -> write.request().apply(tether)
                            .doOnNext(reply -> {
                                answered.add(write);
                                if (reply.status() / 100 == 2) {
                                    acknowledged.add(write);
                                }
                                answers.countDown();
                            })
                            .onErrorResume(lost -> Mono.empty()), BURST)
                    .subscribe();
            assertThat(answers.await(60, TimeUnit.SECONDS)).as("round %d: %d answers", round, killAfter).isTrue();
            daemon.kill();
            inFlightAtKill += BURST - answered.size();
            running.dispose();
            daemon = start(store);
            assertKept(new TetherClient(daemon.port(), daemon.token()), acknowledged, round);
        }
        assertThat(inFlightAtKill).as("writes still unanswered at the kills, over all rounds").isPositive();
    }

    /** After how many answers round {@code round} kills: at random in its own slice of 1 to {@code BURST - 3}. */
    private static int killPoint(int round) {
        int span = BURST - 3;
        return ThreadLocalRandom.current().nextInt(1 + round * span / ROUNDS, 1 + (round + 1) * span / ROUNDS);
    }

    private static List<Write> burst(int round, String base) {
        List<Write> writes = new ArrayList<>();
        for (int i = 0; i < BURST; i++) {
            String name = "r" + round + "_w" + i;
            writes.add(switch (i % 3) {
                case 0 -> new Write("integration", name, tether -> tether.exchange(HttpMethod.POST, "/api/mcp/servers",
                        Map.of("transport", "stdio", "name", "Server " + name, "slug", name,
                                "command", "node", "args", List.of("server.js"), "env", Map.of("TOKEN", "t-" + name))));
                // A connection's name is stored as an identifier (r0w1), as Executor stores it.
                case 1 -> new Write("connection", name.replace("_", ""), tether -> tether.exchange(HttpMethod.POST, "/api/connections",
                        Map.of("owner", "user", "name", name.replace("_", ""), "integration", base, "template", "API_TOKEN",
                                "value", "v-" + name)));
                default -> new Write("policy", name.replace('_', '.') + ".*", tether -> tether.exchange(HttpMethod.POST,
                        "/api/policies", Map.of("owner", "user", "pattern", name.replace('_', '.') + ".*",
                                "action", "block")));
            });
        }
        return writes;
    }

    private static void assertKept(TetherClient tether, List<Write> acknowledged, int round) {
        Set<String> integrations = names(tether.get("/api/integrations"), "slug");
        Set<String> connections = names(tether.get("/api/connections"), "name");
        Set<String> policies = names(tether.get("/api/policies"), "pattern");
        List<String> lost;
        synchronized (acknowledged) {
            lost = acknowledged.stream()
                    .filter(write -> !switch (write.kind()) {
                        case "integration" -> integrations.contains(write.name());
                        case "connection" -> connections.contains(write.name());
                        default -> policies.contains(write.name());
                    })
                    .map(write -> write.kind() + " " + write.name())
                    .toList();
        }
        assertThat(lost).as("writes answered 2xx before the kill of round %d, missing after the restart (of %d)", round,
                acknowledged.size()).isEmpty();
    }

    private static Set<String> names(Reply reply, String field) {
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        JsonNode list = reply.json();
        return StreamSupport.stream(list.spliterator(), false).map(item -> item.path(field).asString())
                .collect(Collectors.toSet());
    }

    private PackagedDaemon start(Map<String, String> store) throws IOException, InterruptedException {
        PackagedDaemon daemon = PackagedDaemon.start(PackagedDaemon.jarOrSkip(), dataDir, List.of(), store);
        daemons.add(daemon);
        return daemon;
    }
}
