package dev.tether.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

import dev.tether.health.HealthProperties;
import dev.tether.health.HealthService;
import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.RequiresDocker;

/**
 * The pool with {@code docker run -i --rm} servers: a storm of checks starts one container, and a session whose
 * askers all leave during the handshake leaves no container. Containers are counted by the Docker engine, by
 * the {@code tether.instance} label of this test's harness.
 */
@RequiresDocker
class DockerSessionTest {

    private static final Duration BOUND = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private PoolHarness harness;

    @AfterEach
    void leaveNothingBehind() {
        if (harness != null) {
            harness.close(); // fails when a container of this instance is left
        }
    }

    @Test
    void hundredConcurrentChecksOfADockerServerStartOneContainer() {
        harness = PoolHarness.builder(dir).docker().build();
        HealthService health = harness.health(HealthProperties.defaults());
        ConnectionKey key = harness.connect("dock", harness.dockerFixture("dock"));

        long start = System.nanoTime();
        List<HealthVerdict> verdicts = Flux.range(0, 100).flatMap(i -> health.check(key, Optional.empty()), 100)
                .collectList().block(BOUND);
        long coldMillis = (System.nanoTime() - start) / 1_000_000;

        assertThat(verdicts).hasSize(100).allSatisfy(verdict -> assertThat(verdict.status()).isEqualTo("healthy"));
        assertThat(containers()).as("containers the engine knows for this instance").isEqualTo(1);
        assertThat(harness.recorded("dock", "initialize")).as("handshakes the servers saw").isEqualTo(1);
        assertThat(harness.counter("tether.children.spawned", "kind", "docker")).isEqualTo(1.0);
        assertThat(harness.counter("tether.health.checks", "outcome", "coalesced")).isEqualTo(99.0);

        harness.pool().retire("dock").block(BOUND);
        DockerContainers.awaitNoneWithLabel(PoolHarness.INSTANCE_LABEL, harness.instanceId(), BOUND);
        await().atMost(BOUND).until(() -> harness.liveProcesses().isEmpty());
        System.out.printf("FIGURES docker coalescing: 100 cold checks in %d ms, 1 container%n", coldMillis);
    }

    @Test
    void cancelDuringHandshakeRemovesContainer() {
        harness = PoolHarness.builder(dir).docker().build();
        ConnectionKey key = harness.connect("mute", harness.dockerFixture("mute", "--hang-on-initialize"));

        Disposable first = harness.pool().withSession(key, session -> session.ping()).subscribe(ignored -> { }, error -> { });
        Disposable second = harness.pool().withSession(key, session -> session.ping()).subscribe(ignored -> { }, error -> { });
        await().atMost(BOUND).until(() -> harness.recorded("mute", "initialize") == 1);
        assertThat(containers()).as("the half-made session's container runs").isEqualTo(1);

        first.dispose();
        second.dispose();

        DockerContainers.awaitNoneWithLabel(PoolHarness.INSTANCE_LABEL, harness.instanceId(), Duration.ofSeconds(30));
        await().atMost(BOUND).until(() -> harness.liveProcesses().isEmpty());
        assertThat(harness.pool().size()).isZero();
        assertThat(harness.counter("tether.children.spawned", "kind", "docker")).isEqualTo(1.0);
    }

    private int containers() {
        return DockerContainers.withLabel(PoolHarness.INSTANCE_LABEL, harness.instanceId()).size();
    }
}
