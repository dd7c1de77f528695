package dev.tether.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.store.ConnectionKey;

/**
 * Askers beyond {@code max-leases-per-session} wait in line on a real fixture server: first come first served,
 * refused only when the wait runs out (on the pool's virtual clock), gone from the line the moment they leave.
 */
class LeaseQueueTest {

    private static final Duration BOUND = Duration.ofSeconds(20);
    private static final Duration WAIT = Duration.ofSeconds(3);

    @TempDir
    Path dir;

    private PoolHarness harness;
    private VirtualTimeScheduler clock;

    @AfterEach
    void leaveNothingBehind() {
        if (harness != null) {
            harness.close();
        }
        if (clock != null) {
            clock.dispose();
        }
    }

    private PoolHarness harness(int leases, int waiters) {
        clock = VirtualTimeScheduler.create();
        harness = PoolHarness.builder(dir).sessions(new SessionProperties(null, null, leases, WAIT, waiters, null)).timer(clock).build();
        return harness;
    }

    @Test
    void aWaiterIsRefusedWhenTheWaitRunsOutAndNotBefore() {
        PoolHarness h = harness(1, 8);
        ConnectionKey key = h.connect("full", h.fixture("full"));
        Disposable held = h.hold(key);

        StepVerifier.create(h.pool().withSession(key, session -> session.ping().thenReturn("pong")))
                .expectSubscription()
                .then(() -> assertThat(waiting(h)).isEqualTo(1.0))
                .then(() -> clock.advanceTimeBy(WAIT.minusMillis(1)))
                .expectNoEvent(Duration.ofMillis(50))
                .then(() -> clock.advanceTimeBy(Duration.ofMillis(1)))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(SessionLimitException.class)
                        .hasMessageContaining("tether.session.lease-wait"))
                .verify(BOUND);
        assertThat(waiting(h)).as("the refused waiter left the line").isZero();
        held.dispose();
    }

    @Test
    void aWaiterIsServedWhenALeaseEnds() {
        PoolHarness h = harness(1, 8);
        ConnectionKey key = h.connect("turn", h.fixture("turn"));
        Disposable held = h.hold(key);

        StepVerifier.create(h.pool().withSession(key, session -> session.ping().thenReturn("pong")))
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(100))
                .then(held::dispose)
                .expectNext("pong")
                .expectComplete()
                .verify(BOUND);
    }

    @Test
    void aCancelledWaiterLeavesTheLineAtOnceAndItsPlaceGoesToTheNext() {
        PoolHarness h = harness(1, 1);
        ConnectionKey key = h.connect("leave", h.fixture("leave"));
        Disposable held = h.hold(key);

        Disposable leaver = h.pool().withSession(key, session -> session.ping()).subscribe(ignored -> { }, error -> { });
        assertThat(waiting(h)).isEqualTo(1.0);
        // The line holds one: a second waiter is refused at once while the first is in it.
        StepVerifier.create(h.pool().withSession(key, session -> session.ping()))
                .expectErrorSatisfies(error -> assertThat(error).hasMessageContaining("tether.session.max-lease-waiters"))
                .verify(BOUND);

        leaver.dispose();
        assertThat(waiting(h)).as("gone from the line at once, not when its wait would have run out").isZero();

        StepVerifier.create(h.pool().withSession(key, session -> session.ping().thenReturn("pong")))
                .expectSubscription()
                .then(() -> assertThat(waiting(h)).isEqualTo(1.0))
                .then(held::dispose)
                .expectNext("pong")
                .expectComplete()
                .verify(BOUND);
        // The cancelled waiter never held a lease: one lease is all there is, and it is free again.
        StepVerifier.create(h.pool().withSession(key, session -> session.ping().thenReturn("again")))
                .expectNext("again").expectComplete().verify(BOUND);
    }

    @Test
    void thirtyTwoCallersOnOneConnectionAreAllAnswered() {
        PoolHarness h = harness(4, 1024);
        ConnectionKey key = h.connect("busy", h.fixture("busy"));

        List<String> answers = Flux.range(0, 32)
                .flatMap(i -> h.pool().withSession(key, session -> session.ping().then(Mono.just("pong " + i))), 32)
                .collectList()
                .block(BOUND);

        assertThat(answers).hasSize(32);
        assertThat(waiting(h)).isZero();
        assertThat(h.spawns("busy")).isEqualTo(1);
    }

    private static double waiting(PoolHarness h) {
        return h.registry().get("tether.sessions.lease.waiting").gauge().value();
    }
}
