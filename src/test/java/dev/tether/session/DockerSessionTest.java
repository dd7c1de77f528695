package dev.tether.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.health.HealthProperties;
import dev.tether.health.HealthService;
import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.RequiresDocker;

/**
 * The pool with {@code docker run -i --rm} servers: a storm of checks starts one container, and a start every asker
 * left is joined by the next asker or, when nobody comes within the linger, leaves no container; 50 connections under
 * a cap of 10 never have more than 10 containers at once. Containers are counted by the Docker engine, by
 * the {@code tether.instance} label of this test's harness.
 */
@RequiresDocker
class DockerSessionTest extends HarnessedTest {

    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final Duration LINGER = Duration.ofSeconds(15);

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
    void abandonedDockerStartIsJoinedByTheNextAskerOrRemovedWhenTheLingerRunsOut() {
        VirtualTimeScheduler timer = VirtualTimeScheduler.create();
        try {
            harness = PoolHarness.builder(dir).docker().sessions(new SessionProperties(null, null, null, null, null, LINGER)).timer(timer).build();
            ConnectionKey joined = harness.connect("joined", harness.dockerFixture("joined", "--slow-start=2000"));
            ConnectionKey mute = harness.connect("mute", harness.dockerFixture("mute", "--hang-on-initialize"));

            Disposable first = harness.pool().withSession(joined, session -> session.ping()).subscribe(ignored -> { }, error -> { });
            Disposable second = harness.pool().withSession(mute, session -> session.ping()).subscribe(ignored -> { }, error -> { });
            await().atMost(BOUND).until(() -> containers() == 2);
            first.dispose(); // both reloads abandon their requests while the containers start
            second.dispose();

            StepVerifier.create(harness.pool().withSession(joined, session -> session.ping().thenReturn("pong")))
                    .expectNext("pong").expectComplete().verify(BOUND);
            assertThat(harness.recorded("joined", "initialize")).as("the next asker joined the start").isEqualTo(1);
            await().atMost(BOUND).until(() -> harness.recorded("mute", "initialize") == 1);

            timer.advanceTimeBy(LINGER.minusMillis(1));
            assertThat(containers()).as("1 ms before the linger ends, both containers run").isEqualTo(2);
            timer.advanceTimeBy(Duration.ofMillis(1));
            await().atMost(BOUND).until(() -> containers() == 1);
            assertThat(harness.pool().size()).as("the joined session stays warm").isEqualTo(1);
            assertThat(harness.counter("tether.children.spawned", "kind", "docker")).isEqualTo(2.0);
            // Counted once the ladder is done, which is after the container is gone.
            await("the lingering one obeyed EOF").atMost(BOUND)
                    .until(() -> harness.counter("tether.children.teardown", "rung", "eof") == 1.0);
            assertThat(harness.counter("tether.children.teardown", "rung", "container")).isZero();
        }
        finally {
            timer.dispose();
        }
    }

    @Test
    void maxSessionsHoldsUnderAStormOfFiftyConnectionsWithACapOfTen() throws IOException {
        harness = PoolHarness.builder(dir).docker()
                .sessions(new SessionProperties(null, 10, null, null, null, null, Duration.ofMinutes(3), null)).build();
        List<ConnectionKey> keys = java.util.stream.IntStream.range(0, 50)
                .mapToObj(i -> harness.connect("cap" + i, harness.dockerFixture("cap" + i))).toList();
        int mostContainers;
        // Counted by the Docker engine, not the pool: every container of this instance, running or being removed, as
        // its events say; the pool's own count is sampled beside it.
        List<String> answers;
        long start = System.nanoTime();
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
        AtomicInteger mostCounted = new AtomicInteger();
        try (DockerContainers.ContainersAtOnce engine = DockerContainers.countAtOnce(PoolHarness.INSTANCE_LABEL, harness.instanceId())) {
            sampler.scheduleAtFixedRate(() -> mostCounted.accumulateAndGet(harness.pool().children(), Math::max), 0, 10,
                    TimeUnit.MILLISECONDS);
            try {
                answers = Flux.fromIterable(keys)
                        .flatMap(key -> harness.pool().withSession(key, session -> session.ping().thenReturn("pong")), keys.size())
                        .collectList().block(Duration.ofMinutes(5));
            }
            finally {
                sampler.shutdownNow();
            }
            // The events have caught up once they count what the engine lists.
            Await.until(() -> engine.now() == containers(), BOUND, () -> engine.now() + " counted, " + containers() + " listed");
            mostContainers = engine.most();
        }
        long millis = (System.nanoTime() - start) / 1_000_000;

        assertThat(answers).hasSize(50).containsOnly("pong");
        assertThat(mostContainers).as("containers at once, as the engine counts them").isPositive().isLessThanOrEqualTo(10);
        assertThat(mostCounted.get()).as("children the pool counted at once").isLessThanOrEqualTo(10);
        assertThat(harness.counter("tether.children.spawned", "kind", "docker")).isEqualTo(50.0);
        assertThat(containers()).isLessThanOrEqualTo(10);
        System.out.printf("FIGURES max-sessions 10: 50 docker connections pinged in %d ms, at most %d containers at once%n",
                millis, mostContainers);
    }

    private int containers() {
        return DockerContainers.withLabel(PoolHarness.INSTANCE_LABEL, harness.instanceId()).size();
    }
}
