package dev.tether.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.mcp.McpProperties;
import dev.tether.process.ProcessProperties;
import dev.tether.session.HarnessedTest;
import dev.tether.session.PoolHarness;
import dev.tether.session.SessionProperties;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;
import dev.tether.testsupport.OsProcesses;

/**
 * Health checks against real fixture processes: coalescing, superseded generations, a server that stops
 * answering pings, and verdicts answered from the store. Spawns are counted by the fixtures themselves and by
 * {@code tether.children.spawned}; liveness is asked of the OS.
 */
class HealthServiceTest extends HarnessedTest {

    private static final Duration BOUND = Duration.ofSeconds(20);

    @Test
    void hundredConcurrentChecksOfOneConnectionSpawnOnce() {
        harness = PoolHarness.builder(dir).build();
        HealthService health = harness.health(HealthProperties.defaults());
        ConnectionKey key = harness.connect("popular", harness.fixture("popular"));

        long cold = System.nanoTime();
        List<HealthVerdict> verdicts = Flux.range(0, 100)
                .flatMap(i -> health.check(key, Optional.empty()), 100)
                .collectList()
                .block(BOUND);
        long coldMillis = (System.nanoTime() - cold) / 1_000_000;

        assertThat(verdicts).hasSize(100).allSatisfy(verdict -> assertThat(verdict.status()).isEqualTo("healthy"));
        assertThat(harness.spawns("popular")).as("spawns the OS saw").isEqualTo(1);
        assertThat(harness.counter("tether.children.spawned")).isEqualTo(1.0);
        assertThat(harness.recorded("popular", "ping")).as("one probe, one ping").isEqualTo(1);
        assertThat(harness.counter("tether.health.checks", "outcome", "coalesced")).isEqualTo(99.0);
        assertThat(harness.counter("tether.health.checks", "outcome", "healthy")).isEqualTo(1.0);

        // A second storm on the warm session: still no spawn.
        long warm = System.nanoTime();
        List<HealthVerdict> again = Flux.range(0, 100)
                .flatMap(i -> health.check(key, Optional.empty()), 100)
                .collectList()
                .block(BOUND);
        long warmMillis = (System.nanoTime() - warm) / 1_000_000;
        assertThat(again).hasSize(100).allSatisfy(verdict -> assertThat(verdict.status()).isEqualTo("healthy"));
        assertThat(harness.spawns("popular")).isEqualTo(1);

        long single = System.nanoTime();
        for (int i = 0; i < 20; i++) {
            assertThat(health.check(key, Optional.empty()).block(BOUND).status()).isEqualTo("healthy");
        }
        long warmSingleMicros = (System.nanoTime() - single) / 1_000 / 20;
        System.out.printf("FIGURES coalescing: 100 cold checks in %d ms (1 spawn, %d pings); 100 warm checks in %d ms "
                        + "(%d pings in all); warm single check %d us%n", coldMillis, 1, warmMillis,
                harness.recorded("popular", "ping") - 20, warmSingleMicros);
    }

    /**
     * Generation 1 checks four connections two at a time; alpha and beta (slow to start) run, delta and gamma
     * wait. Generation 2 wants only alpha and arrives while both still start: beta is dropped and its half-made
     * session torn down, delta and gamma never spawn, alpha is joined, not restarted.
     */
    @Test
    void newerGenerationDropsUnstartedChecksAndSharesTheOneBothWant() {
        // No linger in the pool: beta's abandoned start is torn down at once rather than kept for a next asker.
        harness = PoolHarness.builder(dir).sessions(new SessionProperties(null, null, null, null, null, Duration.ZERO)).build();
        HealthService health = harness.health(new HealthProperties(null, 2, null));
        ConnectionKey alpha = harness.connect("alpha", harness.fixture("alpha", "--slow-start=1500"));
        ConnectionKey beta = harness.connect("beta", harness.fixture("beta", "--slow-start=1500"));
        ConnectionKey delta = harness.connect("delta", harness.fixture("delta"));
        ConnectionKey gamma = harness.connect("gamma", harness.fixture("gamma"));
        List<HealthEvent> first = new CopyOnWriteArrayList<>();
        List<HealthEvent> all = new CopyOnWriteArrayList<>();
        Disposable events = health.events().subscribe(all::add);

        Disposable generation1 = health.checkAll(Optional.empty(), Optional.empty()).subscribe(first::add);
        await().atMost(BOUND).until(() -> harness.spawns("alpha") == 1 && harness.spawns("beta") == 1);

        StepVerifier.create(health.checkAll(Optional.of("alpha"), Optional.empty()))
                .assertNext(event -> {
                    assertThat(event.key()).isEqualTo(alpha);
                    assertThat(event.verdict().status()).isEqualTo("healthy");
                })
                .expectComplete()
                .verify(BOUND);

        assertThat(generation1.isDisposed()).as("generation 1 is over once superseded").isTrue();
        assertThat(first).as("generation 1 reached no verdict").isEmpty();
        assertThat(harness.spawns("alpha")).as("alpha shared, not restarted").isEqualTo(1);
        assertThat(harness.counter("tether.health.checks", "outcome", "coalesced")).isEqualTo(1.0);
        OsProcesses.awaitGone(harness.spawnedPids("beta"), Duration.ofSeconds(10));
        assertThat(harness.spawns("delta")).as("unstarted checks of generation 1 never spawn").isZero();
        assertThat(harness.spawns("gamma")).isZero();
        assertThat(lastHealth(beta)).as("a dropped check persists nothing").isEmpty();
        assertThat(lastHealth(delta)).isEmpty();
        assertThat(lastHealth(gamma)).isEmpty();
        assertThat(lastHealth(alpha)).map(HealthVerdict::status).contains("healthy");
        assertThat(all).extracting(HealthEvent::key).containsExactly(alpha);
        events.dispose();
    }

    @Test
    void checkOfAServerStillStartingAtTheTimeoutIsDegradedAndTheStartGoesOn() throws Exception {
        VirtualTimeScheduler timer = VirtualTimeScheduler.create();
        harness = PoolHarness.builder(dir).timer(timer).build();
        HealthService health = harness.health(new HealthProperties(Duration.ofSeconds(20), null, null));
        ConnectionKey key = harness.connect("mute", harness.fixture("mute", "--hang-on-initialize"));

        CompletableFuture<HealthVerdict> verdict = health.check(key, Optional.empty()).toFuture();
        await().atMost(BOUND).until(() -> harness.recorded("mute", "initialize") == 1);
        timer.advanceTimeBy(Duration.ofSeconds(20).minusMillis(1));
        assertThat(verdict).as("1 ms before the timeout").isNotDone();
        timer.advanceTimeBy(Duration.ofMillis(1));

        assertThat(verdict.get(BOUND.toSeconds(), TimeUnit.SECONDS)).satisfies(degraded -> {
            assertThat(degraded.status()).isEqualTo("degraded");
            assertThat(degraded.detail()).hasValue("health check timed out after 20000ms waiting for the server to start");
        });
        assertThat(harness.pool().size()).as("the start goes on, for the next asker to join").isEqualTo(1);
        assertThat(OsProcesses.alive(harness.spawnedPids("mute").get(0))).isTrue();
        timer.dispose();
    }

    @Test
    void serverThatStopsAnsweringPingsIsTornDownAndTheVerdictSaysSo() throws Exception {
        harness = PoolHarness.builder(dir)
                .mcp(new McpProperties(null, Duration.ofMillis(500), null, null, null))
                .process(new ProcessProperties(Duration.ofMillis(200), Duration.ofMillis(200), null, null, null))
                .build();
        HealthService health = harness.health(HealthProperties.defaults());
        ConnectionKey key = harness.connect("frozen", harness.fixture("frozen"));
        assertThat(health.check(key, Optional.empty()).block(BOUND).status()).isEqualTo("healthy");
        long pid = harness.spawnedPids("frozen").get(0);

        signal("STOP", pid); // alive, but answers nothing any more
        try {
            HealthVerdict verdict = health.check(key, Optional.empty()).block(BOUND);

            assertThat(verdict.status()).isEqualTo("degraded");
            assertThat(verdict.detail()).hasValueSatisfying(detail -> assertThat(detail).contains("ping timed out after 500ms"));
            assertThat(lastHealth(key)).contains(verdict);
            OsProcesses.awaitGone(List.of(pid), Duration.ofSeconds(10));
            assertThat(harness.pool().size()).isZero();
        }
        finally {
            signal("CONT", pid);
        }
        assertThat(health.check(key, Optional.empty()).block(BOUND).status()).as("a new session answers").isEqualTo("healthy");
        assertThat(harness.spawns("frozen")).isEqualTo(2);
    }

    @Test
    void freshStoredVerdictIsAnsweredWithoutProbing() {
        harness = PoolHarness.builder(dir).build();
        HealthService health = harness.health(HealthProperties.defaults());
        ConnectionKey key = harness.connect("steady", harness.fixture("steady"));
        List<HealthEvent> events = new CopyOnWriteArrayList<>();
        Disposable watching = health.events().subscribe(events::add);

        HealthVerdict probed = health.check(key, Optional.empty()).block(BOUND);
        harness.clock().advance(Duration.ofSeconds(30));
        HealthVerdict cached = health.check(key, Optional.of(Duration.ofMinutes(1))).block(BOUND);

        assertThat(cached).isEqualTo(probed);
        assertThat(harness.recorded("steady", "ping")).isEqualTo(1);
        assertThat(harness.counter("tether.health.checks", "outcome", "cached")).isEqualTo(1.0);

        harness.clock().advance(Duration.ofMinutes(1));
        HealthVerdict reprobed = health.check(key, Optional.of(Duration.ofMinutes(1))).block(BOUND);
        assertThat(reprobed.checkedAt()).isGreaterThan(probed.checkedAt());
        assertThat(harness.recorded("steady", "ping")).as("a stale verdict is probed again").isEqualTo(2);
        assertThat(events).extracting(HealthEvent::generation).containsExactly(0L, 0L);
        assertThat(events).extracting(HealthEvent::verdict).containsExactly(probed, reprobed);
        watching.dispose();
    }

    @Test
    void serverThatFailsToStartIsDegradedNamingItsExitCode() {
        harness = PoolHarness.builder(dir).build();
        HealthService health = harness.health(HealthProperties.defaults());
        ConnectionKey key = harness.connect("broken", harness.fixture("broken", "--exit-at-start=7"));

        HealthVerdict verdict = health.check(key, Optional.empty()).block(BOUND);

        assertThat(verdict.status()).isEqualTo("degraded");
        assertThat(verdict.detail()).hasValueSatisfying(detail -> assertThat(detail)
                .contains("'broken'").contains("exited with code 7").contains("failing at start on purpose"));
        await().atMost(BOUND).until(() -> harness.pool().size() == 0);
    }

    private Optional<HealthVerdict> lastHealth(ConnectionKey key) {
        return harness.stores().connections().find(key).blockOptional(BOUND).flatMap(Connection::lastHealth);
    }

    private static void signal(String signal, long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }
}
