package dev.tether.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import dev.tether.mcp.McpProperties;
import dev.tether.mcp.McpTimeoutException;
import dev.tether.process.ProcessProperties;
import dev.tether.store.ConnectionKey;
import dev.tether.testsupport.OsProcesses;

/**
 * The pool against real fixture processes: single-flight creation, half-made sessions (abandoned ones: see
 * {@link AbandonedStartTest}), leases that keep or
 * retire a session, crash detection, caps and re-configuration. Spawns are counted by the processes themselves
 * (see {@link PoolHarness}), liveness is asked of the OS.
 */
class SessionPoolTest extends HarnessedTest {

    private static final Duration BOUND = Duration.ofSeconds(15);

    private PoolHarness harness(SessionProperties sessions) {
        harness = PoolHarness.builder(dir).sessions(sessions).build();
        return harness;
    }

    @Test
    void concurrentAskersShareOneSpawn() {
        PoolHarness h = harness(new SessionProperties(null, null, 50)); // askers waiting for the session hold leases too
        ConnectionKey key = h.connect("one", h.fixture("one"));

        List<String> answers = Flux.range(0, 50)
                .flatMap(i -> h.pool().withSession(key, session -> session.ping().thenReturn("pong")), 50)
                .collectList()
                .block(BOUND);

        assertThat(answers).hasSize(50).containsOnly("pong");
        assertThat(h.spawns("one")).as("spawns logged by the fixture itself").isEqualTo(1);
        assertThat(h.counter("tether.children.spawned")).isEqualTo(1.0);
        assertThat(h.recorded("one", "initialize")).isEqualTo(1);
        assertThat(h.recorded("one", "ping")).isEqualTo(50);
        assertThat(h.pool().size()).isEqualTo(1);
    }

    @Test
    void oneAskerLeavingKeepsTheHalfMadeSessionForTheOther() {
        PoolHarness h = harness(SessionProperties.defaults());
        ConnectionKey key = h.connect("sleepy", h.fixture("sleepy", "--slow-start=800"));

        Disposable leaving = h.pool().withSession(key, session -> session.ping()).subscribe();
        Mono<String> staying = h.pool().withSession(key, session -> session.ping().thenReturn("pong")).cache();
        staying.subscribe(ignored -> { }, error -> { });
        await().atMost(BOUND).until(() -> h.spawns("sleepy") == 1);
        leaving.dispose();

        StepVerifier.create(staying).expectNext("pong").expectComplete().verify(BOUND);
        assertThat(h.spawns("sleepy")).isEqualTo(1);
        assertThat(OsProcesses.alive(h.spawnedPids("sleepy").get(0))).as("the session stays warm").isTrue();
    }

    @Test
    void cancelledLeaseOnAReadySessionLeavesItWarm() {
        PoolHarness h = harness(SessionProperties.defaults());
        ConnectionKey key = h.connect("warm", h.fixture("warm"));
        CountDownLatch leased = new CountDownLatch(1);

        Disposable lease = h.pool().withSession(key, session -> Mono.fromRunnable(leased::countDown).then(Mono.never()))
                .subscribe();
        await().atMost(BOUND).until(() -> leased.getCount() == 0);
        lease.dispose();

        StepVerifier.create(h.pool().withSession(key, session -> session.ping().thenReturn("pong")))
                .expectNext("pong").expectComplete().verify(BOUND);
        assertThat(h.spawns("warm")).as("the second request reuses the warm session").isEqualTo(1);
        assertThat(OsProcesses.alive(h.spawnedPids("warm").get(0))).isTrue();
    }

    @Test
    void serverThatDiesWhileIdleIsNoticedAtOnceAndTheNextAskerGetsANewSession() {
        PoolHarness h = harness(SessionProperties.defaults());
        ConnectionKey key = h.connect("brief", h.fixture("brief"));

        StepVerifier.create(h.pool().withSession(key, session -> session.ping().thenReturn("pong")))
                .expectNext("pong").expectComplete().verify(BOUND);
        long first = h.spawnedPids("brief").get(0);
        ProcessHandle.of(first).ifPresent(ProcessHandle::destroy); // SIGTERM from outside: the fixture exits 143

        // Nobody leases it: the pool notices the exit by itself and drops the session.
        await().atMost(BOUND).until(() -> h.pool().size() == 0);
        OsProcesses.awaitGone(List.of(first), Duration.ofSeconds(10));

        StepVerifier.create(h.pool().withSession(key, session -> session.ping().thenReturn("pong")))
                .expectNext("pong").expectComplete().verify(BOUND);
        assertThat(h.spawns("brief")).isEqualTo(2);
    }

    /** The process lives on, frozen: only the lease's failure (a ping timeout) can tell the pool to retire it. */
    @Test
    void leaseThatTimesOutRetiresTheSessionThoughItsProcessLives() throws Exception {
        harness = PoolHarness.builder(dir)
                .mcp(new McpProperties(null, Duration.ofMillis(500), null, null, null))
                .process(new ProcessProperties(Duration.ofMillis(200), Duration.ofMillis(200), null, null, null))
                .build();
        ConnectionKey key = harness.connect("frozen", harness.fixture("frozen"));
        ping(harness, key);
        long frozen = harness.spawnedPids("frozen").get(0);
        signal("STOP", frozen);
        try {
            StepVerifier.create(harness.pool().withSession(key, session -> session.ping()))
                    .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(McpTimeoutException.class)
                            .hasMessageContaining("ping timed out after 500ms"))
                    .verify(BOUND);
            assertThat(harness.pool().size()).as("retired by the failed lease").isZero();
            OsProcesses.awaitGone(List.of(frozen), Duration.ofSeconds(10));
        }
        finally {
            signal("CONT", frozen);
        }
        ping(harness, key);
        assertThat(harness.spawns("frozen")).isEqualTo(2);
    }

    /** A failure of the body's own making says nothing about the server: the session stays. */
    @Test
    void leaseThatFailsOnItsOwnKeepsTheSession() {
        PoolHarness h = harness(SessionProperties.defaults());
        ConnectionKey key = h.connect("fine", h.fixture("fine"));

        StepVerifier.create(h.pool().withSession(key, session -> session.ping().then(Mono.error(new IllegalStateException("caller bug")))))
                .expectErrorMessage("caller bug")
                .verify(BOUND);
        ping(h, key);

        assertThat(h.spawns("fine")).isEqualTo(1);
    }

    @Test
    void allSessionsBusyAtMaxSessionsIsRefusedWhenStartsMayNotWait() {
        PoolHarness h = harness(new SessionProperties(null, 2, null, null, null, null, Duration.ZERO, null));
        ConnectionKey a = h.connect("a", h.fixture("a"));
        ConnectionKey b = h.connect("b", h.fixture("b"));
        ConnectionKey c = h.connect("c", h.fixture("c"));
        Disposable holdA = hold(h, a);
        Disposable holdB = hold(h, b);

        StepVerifier.create(h.pool().withSession(c, session -> session.ping()))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(SessionLimitException.class)
                        .hasMessageContaining("tether.session.max-sessions").hasMessageContaining("tether.session.start-wait is 0")
                        .satisfies(e -> assertThat(((SessionLimitException) e).limit()).isEqualTo("tether.session.max-sessions")))
                .verify(BOUND);
        assertThat(h.spawns("c")).as("a refused asker spawns nothing").isZero();

        holdA.dispose();
        holdB.dispose();
    }

    @Test
    void aStartAtMaxSessionsWaitsForABusySessionToGoIdleWhichThenGivesWay() {
        PoolHarness h = harness(new SessionProperties(null, 1, null));
        ConnectionKey a = h.connect("a", h.fixture("a"));
        ConnectionKey b = h.connect("b", h.fixture("b"));
        Disposable holdA = hold(h, a);

        StepVerifier.create(h.pool().withSession(b, session -> session.ping().thenReturn("pong")))
                .expectSubscription()
                .then(() -> await().atMost(BOUND).until(() -> h.registry().get("tether.sessions.starts.waiting").gauge().value() == 1.0))
                .then(() -> assertThat(h.spawns("b")).as("nothing spawned beyond the cap").isZero())
                .then(holdA::dispose)
                .expectNext("pong")
                .expectComplete()
                .verify(BOUND);
        OsProcesses.awaitGone(h.spawnedPids("a"), Duration.ofSeconds(10));
        assertThat(h.pool().children()).isEqualTo(1);
    }

    @Test
    void aOneOffSessionCountsUnderMaxSessionsUntilItsChildIsGone() {
        PoolHarness h = harness(new SessionProperties(null, 1, null, null, null, null, Duration.ZERO, null));
        ConnectionKey a = h.connect("a", h.fixture("a"));
        Disposable holdA = hold(h, a);

        StepVerifier.create(h.pool().withUnpooledSession(h.server("b", h.fixture("b")), session -> session.ping()))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(SessionLimitException.class)
                        .hasMessageContaining("tether.session.max-sessions"))
                .verify(BOUND);
        assertThat(h.spawns("b")).isZero();
        holdA.dispose();
        h.pool().retire(a).block(BOUND);
        await().atMost(BOUND).until(() -> h.pool().children() == 0);

        StepVerifier.create(h.pool().withUnpooledSession(h.server("b", h.fixture("b")), session -> session.ping().thenReturn("pong")))
                .expectNext("pong").expectComplete().verify(BOUND);
        OsProcesses.awaitGone(h.spawnedPids("b"), Duration.ofSeconds(10));
        await().atMost(BOUND).until(() -> h.pool().children() == 0);
    }

    /**
     * Lease against retire: at a cap of one, a lease on the idle session races a start of another connection that
     * makes it give way. Whichever wins, both requests are served: a lease is never granted on the session going away
     * (it would fail as "server exited").
     */
    @Test
    void aLeaseIsNeverGrantedOnASessionThatGivesWay() {
        PoolHarness h = harness(new SessionProperties(null, 1, null));
        ConnectionKey a = h.connect("a", h.fixture("a"));
        ConnectionKey b = h.connect("b", h.fixture("b"));
        for (int i = 0; i < 10; i++) {
            ping(h, i % 2 == 0 ? a : b);
            List<String> answers = Flux.merge(
                            h.pool().withSession(a, session -> session.ping().thenReturn("a")).subscribeOn(reactor.core.scheduler.Schedulers.parallel()),
                            h.pool().withSession(b, session -> session.ping().thenReturn("b")).subscribeOn(reactor.core.scheduler.Schedulers.parallel()))
                    .collectList().block(Duration.ofSeconds(60));
            assertThat(answers).as("round %d", i).containsExactlyInAnyOrder("a", "b");
            assertThat(h.pool().children()).as("children at a cap of one").isLessThanOrEqualTo(1);
        }
    }

    @Test
    void idleSessionGivesWayToANewOneAtTheCap() {
        PoolHarness h = harness(new SessionProperties(null, 2, null));
        ConnectionKey a = h.connect("a", h.fixture("a"));
        ConnectionKey b = h.connect("b", h.fixture("b"));
        ConnectionKey c = h.connect("c", h.fixture("c"));
        ping(h, a); // a: idle, released first, so least recently used
        Disposable holdB = hold(h, b);

        ping(h, c);

        OsProcesses.awaitGone(h.spawnedPids("a"), Duration.ofSeconds(10));
        assertThat(h.pool().size()).isEqualTo(2);
        assertThat(OsProcesses.alive(h.spawnedPids("b").get(0))).as("the busy session stays").isTrue();
        holdB.dispose();
    }

    @Test
    void leasesBeyondMaxLeasesPerSessionAreRefusedWhenTheyMayNotWait() {
        PoolHarness h = harness(new SessionProperties(null, null, 2, Duration.ZERO, null, null));
        ConnectionKey key = h.connect("busy", h.fixture("busy"));
        Disposable one = hold(h, key);
        Disposable two = hold(h, key);

        StepVerifier.create(h.pool().withSession(key, session -> session.ping()))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(SessionLimitException.class)
                        .satisfies(e -> assertThat(((SessionLimitException) e).limit())
                                .isEqualTo("tether.session.max-leases-per-session")))
                .verify(BOUND);

        one.dispose();
        StepVerifier.create(h.pool().withSession(key, session -> session.ping().thenReturn("pong")))
                .expectNext("pong").expectComplete().verify(BOUND);
        two.dispose();
        assertThat(h.spawns("busy")).isEqualTo(1);
    }

    /** A pool of one lease: if a cancelled, failed or completed lease leaked its count, the last request would be refused. */
    @Test
    void everyWayALeaseEndsGivesItsPlaceBack() {
        PoolHarness h = harness(new SessionProperties(null, null, 1, Duration.ZERO, null, null));
        ConnectionKey key = h.connect("single", h.fixture("single"));

        ping(h, key);
        StepVerifier.create(h.pool().withSession(key, session -> Mono.error(new IllegalStateException("body failed"))))
                .expectErrorMessage("body failed").verify(BOUND);
        Disposable cancelled = hold(h, key);
        cancelled.dispose();
        Disposable held = hold(h, key);

        StepVerifier.create(h.pool().withSession(key, session -> session.ping()))
                .expectError(SessionLimitException.class).verify(BOUND);
        held.dispose();
        ping(h, key);
        assertThat(h.spawns("single")).as("none of these ends retired the session").isEqualTo(1);
    }

    @Test
    void reconfiguredIntegrationGetsANewSessionAndTheOldOneIsTornDown() {
        PoolHarness h = harness(SessionProperties.defaults());
        ConnectionKey key = h.connect("conf", h.fixture("conf", "--tools=1"));
        ping(h, key);
        long old = h.spawnedPids("conf").get(0);

        h.reconfigure("conf", h.fixture("conf", "--tools=2"));
        ping(h, key);

        OsProcesses.awaitGone(List.of(old), Duration.ofSeconds(10));
        assertThat(h.spawns("conf")).isEqualTo(2);
        assertThat(h.pool().size()).isEqualTo(1);
    }

    /**
     * One child per connection at any moment: a retired session whose server ignores stdin's end tears down for the
     * EOF grace and more, and a request meanwhile waits for that child to be gone before the next one is spawned,
     * rather than running a second child (a second container) of the connection beside it.
     */
    @Test
    void aNewSessionWaitsUntilTheRetiredOnesChildIsGone() {
        PoolHarness h = harness(SessionProperties.defaults());
        ConnectionKey key = h.connect("slowgoing", h.fixture("slowgoing", "--ignore-eof"));
        ping(h, key);
        long old = h.spawnedPids("slowgoing").get(0);

        h.pool().retire(key).block(BOUND);
        ping(h, key);

        assertThat(h.spawns("slowgoing")).isEqualTo(2);
        assertThat(OsProcesses.alive(old)).as("the retired session's child, when the next one answered").isFalse();
        assertThat(h.pool().size()).isEqualTo(1);
    }

    /**
     * What a replica taken for dead does before it serves again: every session goes, the one in use too, and the call
     * completes only once every child is gone, one whose server ignores stdin's end (a slow teardown) included.
     */
    @Test
    void retiringAllCompletesOnceEveryChildIsGone() {
        PoolHarness h = harness(SessionProperties.defaults());
        ConnectionKey idle = h.connect("idle-all", h.fixture("idle-all", "--ignore-eof"));
        ConnectionKey busy = h.connect("busy-all", h.fixture("busy-all"));
        ping(h, idle);
        Disposable held = hold(h, busy);
        List<Long> children = new ArrayList<>(h.spawnedPids("idle-all"));
        children.addAll(h.spawnedPids("busy-all"));

        h.pool().retireAll("taken for dead").block(BOUND);

        assertThat(children).as("children once retireAll completed").noneMatch(OsProcesses::alive);
        assertThat(h.pool().size()).isZero();
        held.dispose();
    }

    @Test
    void retiringAnIntegrationTearsItsSessionsDown() {
        PoolHarness h = harness(SessionProperties.defaults());
        ConnectionKey key = h.connect("gone", h.fixture("gone"));
        ping(h, key);

        h.pool().retire("gone").block(BOUND);

        OsProcesses.awaitGone(h.spawnedPids("gone"), Duration.ofSeconds(10));
        assertThat(h.pool().size()).isZero();
    }

    /** A connection that moved to another replica: its session goes once the request it serves is answered, not before. */
    @Test
    void aSessionRetiredOnceIdleFinishesItsLeaseFirst() {
        PoolHarness h = harness(SessionProperties.defaults());
        ConnectionKey busy = h.connect("busy", h.fixture("busy"));
        ConnectionKey idle = h.connect("idle", h.fixture("idle"));
        ConnectionKey stays = h.connect("stays", h.fixture("stays"));
        ping(h, idle);
        ping(h, stays);
        CountDownLatch leased = new CountDownLatch(1);
        Sinks.Empty<Void> release = Sinks.empty();
        Mono<String> inFlight = h.pool().withSession(busy, session -> Mono.fromRunnable(leased::countDown)
                .then(release.asMono()).then(session.ping()).thenReturn("answered")).cache();
        inFlight.subscribe(ignored -> { }, error -> { });
        await().atMost(BOUND).until(() -> leased.getCount() == 0);

        assertThat(h.pool().retireOnceIdle(key -> !key.equals(stays), "moved")).as("retired at once: the idle one").isEqualTo(1);
        OsProcesses.awaitGone(h.spawnedPids("idle"), Duration.ofSeconds(10));
        assertThat(OsProcesses.alive(h.spawnedPids("busy").get(0))).as("in use").isTrue();

        release.tryEmitEmpty();
        StepVerifier.create(inFlight).expectNext("answered").expectComplete().verify(BOUND);
        OsProcesses.awaitGone(h.spawnedPids("busy"), Duration.ofSeconds(10));
        assertThat(OsProcesses.alive(h.spawnedPids("stays").get(0))).isTrue();
        await().atMost(BOUND).until(() -> h.pool().size() == 1);
    }

    private static void signal(String signal, long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }

    private static void ping(PoolHarness h, ConnectionKey key) {
        StepVerifier.create(h.pool().withSession(key, session -> session.ping().thenReturn("pong")))
                .expectNext("pong").expectComplete().verify(BOUND);
    }

    private static Disposable hold(PoolHarness h, ConnectionKey key) {
        return h.hold(key);
    }
}
