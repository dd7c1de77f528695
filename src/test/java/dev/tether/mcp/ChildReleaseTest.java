package dev.tether.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import dev.tether.docker.DockerRunRewriter;
import dev.tether.docker.InstanceId;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ContainerRemover;
import dev.tether.process.ProcessProperties;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.LifecycleGuard.Launch;

/**
 * The leak test, in the style of spring-framework's connection-release test ("a pool of one, two requests: the
 * second hangs if the first leaked"). The pool of one is an exclusive lock that the server process holds for as
 * long as it lives ({@code flock LOCK node fixture ...}): a session can only start its server once the previous
 * server is dead. Each round abandons a session mid-call against a server that ignores EOF and SIGTERM, then
 * needs a fresh session on the same lock to answer; if the first server leaked, the second never gets the lock
 * and its handshake times out.
 */
class ChildReleaseTest {

    private static final ProcessProperties SHORT_GRACES = new ProcessProperties(Duration.ofMillis(300),
            Duration.ofMillis(500), Duration.ofMillis(500), null, null);
    /** Well above the ladder's bound (1.3 s), well below the verify bound. */
    private static final McpProperties HANDSHAKE_WITHIN_8S = new McpProperties(Duration.ofSeconds(8), null, null, null, null);
    private static final int ROUNDS = 3;

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    @Test
    void serverOfAnAbandonedSessionReleasesItsLockForTheNextSession() {
        ChildProcesses children = new ChildProcesses(SHORT_GRACES, guard.tether(), ContainerRemover.NONE,
                new SimpleMeterRegistry());
        McpSessions sessions = new McpSessions(children, new DockerRunRewriter(new InstanceId(guard.tether())),
                HANDSHAKE_WITHIN_8S);
        Path lock = guard.dir().resolve("pool-of-one.lock");

        Flux<String> rounds = Flux.range(1, ROUNDS).concatMap(round -> {
            Launch stubborn = guard.plain("--ignore-eof", "--ignore-sigterm");
            Launch next = guard.plain();
            Mono<String> abandoned = Mono.firstWithSignal(
                    sessions.withSession(locked(lock, stubborn), session -> session.callTool("hang", Map.of()))
                            .map(result -> "the hang tool answered"),
                    // The caller goes away once the server is busy with the call: firstWithSignal cancels the session.
                    Mono.fromRunnable(() -> stubborn.awaitRecorded("tools/call", Duration.ofSeconds(20)))
                            .subscribeOn(Schedulers.boundedElastic())
                            .thenReturn("abandoned"));
            Mono<String> answered = sessions.withSession(locked(lock, next),
                    session -> session.callTool("echo", Map.of("text", "round " + round)))
                    .map(result -> ((TextContent) result.result().content().get(0)).text());
            return abandoned.then(answered);
        });

        List<String> expected = new ArrayList<>();
        for (int round = 1; round <= ROUNDS; round++) {
            expected.add("round " + round);
        }
        StepVerifier.create(rounds.collectList())
                .assertNext(answers -> assertEquals(expected, answers))
                .expectComplete()
                .verify(Duration.ofSeconds(60));
    }

    /** {@code flock LOCK <fixture>}: flock waits for the lock, then runs the fixture, which inherits the lock. */
    private static StdioServer locked(Path lock, Launch launch) {
        List<String> argv = new ArrayList<>(List.of("flock", lock.toString()));
        argv.addAll(launch.argv());
        return StdioServer.of("locked", argv);
    }
}
