package dev.tether.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

import dev.tether.session.HarnessedTest;
import dev.tether.session.PoolHarness;
import dev.tether.store.ConnectionKey;

/**
 * Verdicts reached at once, on many threads, all reach the event stream; a batch whose connection vanished
 * mid-generation still ends.
 */
class HealthEventsTest extends HarnessedTest {

    private static final Duration BOUND = Duration.ofSeconds(30);

    /**
     * Servers that cannot start give their verdicts on the spawning threads, many at the same moment: exactly
     * the concurrent emissions a sink refuses unless they are serialised.
     */
    @Test
    void sixtyFourConnectionsCheckedAtOnceAllReachTheEventStream() {
        harness = PoolHarness.builder(dir).build();
        HealthService health = harness.health(new HealthProperties(null, 64, null));
        List<ConnectionKey> keys = IntStream.range(0, 64)
                .mapToObj(i -> harness.connect("gone-" + i, List.of("/nonexistent/tether-no-such-server-" + i)))
                .toList();
        for (int round = 0; round < 3; round++) {
            Set<ConnectionKey> seen = ConcurrentHashMap.newKeySet();
            Disposable watching = health.events().subscribe(event -> seen.add(event.key()));

            StepVerifier.create(health.checkAll(Optional.empty(), Optional.empty()))
                    .expectNextCount(64)
                    .expectComplete()
                    .verify(BOUND);

            Awaitility.await().atMost(BOUND).until(() -> seen.size() == 64);
            assertThat(seen).as("round %d", round).containsExactlyInAnyOrderElementsOf(keys);
            watching.dispose();
        }
    }

    @Test
    void aConnectionDeletedMidGenerationStillLetsTheBatchEnd() {
        harness = PoolHarness.builder(dir).build();
        HealthService health = harness.health(new HealthProperties(null, 1, null));
        ConnectionKey slow = harness.connect("a-slow", harness.fixture("a-slow", "--slow-start=1500"));
        ConnectionKey doomed = harness.connect("b-doomed", harness.fixture("b-doomed"));

        StepVerifier.create(health.checkAll(Optional.empty(), Optional.empty()))
                .expectSubscription()
                // One at a time: the slow one is being checked, the doomed one waits its turn and vanishes.
                .then(() -> harness.stores().connections().delete(doomed).block(BOUND))
                .assertNext(event -> assertThat(event.key()).isEqualTo(slow))
                .expectComplete()
                .verify(BOUND);
        assertThat(harness.spawns("b-doomed")).isZero();
    }
}
