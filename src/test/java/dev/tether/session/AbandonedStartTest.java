package dev.tether.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.store.ConnectionKey;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.OsProcesses;

/**
 * A session start every asker left goes on under the pool for {@code abandoned-start-linger}: the next asker joins
 * it, or it is torn down when the linger runs out; finished with nobody waiting, it is a warm session like any.
 * Real fixture processes; the pool's timer (linger and idle TTL) runs in virtual time.
 */
class AbandonedStartTest {

    private static final Duration LINGER = Duration.ofSeconds(15);
    private static final Duration IDLE_TTL = Duration.ofMinutes(5);
    private static final Duration BOUND = Duration.ofSeconds(15);

    @TempDir
    Path dir;

    private final VirtualTimeScheduler timer = VirtualTimeScheduler.create();
    private PoolHarness harness;

    private PoolHarness harness(Integer maxSessions) {
        harness = PoolHarness.builder(dir).sessions(new SessionProperties(IDLE_TTL, maxSessions, null, null, null, LINGER)).timer(timer).build();
        return harness;
    }

    @AfterEach
    void leaveNothingBehind() {
        if (harness != null) {
            harness.close();
        }
        timer.dispose();
    }

    @Test
    void nextAskerJoinsTheStartEveryAskerLeft() {
        PoolHarness h = harness(null);
        ConnectionKey key = h.connect("slow", h.fixture("slow", "--slow-start=1500"));

        abandon(h, key);
        timer.advanceTimeBy(LINGER.minusMillis(1));
        assertThat(h.pool().size()).as("still under the pool's ownership").isEqualTo(1);

        StepVerifier.create(h.pool().withSession(key, session -> session.ping().thenReturn("pong")))
                .expectNext("pong").expectComplete().verify(BOUND);
        assertThat(h.spawns("slow")).as("the start was joined, not repeated").isEqualTo(1);
        assertThat(h.recorded("slow", "initialize")).isEqualTo(1);

        timer.advanceTimeBy(Duration.ofMillis(1)); // the linger's end does not touch a session that is ready
        assertThat(h.pool().size()).isEqualTo(1);
        assertThat(OsProcesses.alive(h.spawnedPids("slow").get(0))).isTrue();
    }

    /**
     * Whether a teardown that must not have started did not is told beside a peer whose linger ran out at the same
     * virtual instant: once the peer is gone, a teardown started with it would have ended this child too, on any
     * host, where a pause of fixed length would prove nothing on a slow one.
     */
    @Test
    void startNobodyJoinsIsTornDownWhenTheLingerRunsOut() {
        PoolHarness h = harness(null);
        ConnectionKey peer = h.connect("peer", h.fixture("peer", "--hang-on-initialize"));
        ConnectionKey key = h.connect("mute", h.fixture("mute", "--hang-on-initialize"));
        abandon(h, peer);
        timer.advanceTimeBy(Duration.ofMillis(1));
        abandon(h, key);
        await().atMost(BOUND).until(() -> h.recorded("mute", "initialize") == 1 && h.recorded("peer", "initialize") == 1);
        long pid = h.spawnedPids("mute").get(0);

        timer.advanceTimeBy(LINGER.minusMillis(1));
        OsProcesses.awaitGone(h.spawnedPids("peer"), BOUND); // the peer's linger, 1 ms older, ran out
        assertThat(OsProcesses.alive(pid)).as("1 ms before the linger ends").isTrue();
        assertThat(h.pool().size()).isEqualTo(1);

        timer.advanceTimeBy(Duration.ofMillis(1));
        OsProcesses.awaitGone(List.of(pid), BOUND);
        await().atMost(BOUND).until(() -> h.pool().size() == 0);
        assertThat(h.counter("tether.children.teardown", "rung", "eof")).as("it and the peer obeyed EOF").isEqualTo(2.0);
    }

    @Test
    void lingerRunsFromTheLastAskerToLeave() {
        PoolHarness h = harness(null);
        ConnectionKey peer = h.connect("peer", h.fixture("peer", "--hang-on-initialize"));
        ConnectionKey key = h.connect("mute", h.fixture("mute", "--hang-on-initialize"));
        abandon(h, peer);
        abandon(h, key);
        await().atMost(BOUND).until(() -> h.recorded("mute", "initialize") == 1 && h.recorded("peer", "initialize") == 1);
        long pid = h.spawnedPids("mute").get(0);

        timer.advanceTimeBy(LINGER.minusSeconds(5));
        Disposable second = h.pool().withSession(key, session -> session.ping()).subscribe(ignored -> { }, error -> { });
        second.dispose(); // a second reload's request, abandoned as well
        timer.advanceTimeBy(Duration.ofSeconds(5));
        OsProcesses.awaitGone(h.spawnedPids("peer"), BOUND); // left once, as long ago as the first asker here
        assertThat(OsProcesses.alive(pid)).as("15 s after the first asker left, 5 s after the second").isTrue();

        timer.advanceTimeBy(LINGER.minusSeconds(5));
        OsProcesses.awaitGone(List.of(pid), BOUND);
        assertThat(h.spawns("mute")).isEqualTo(1);
    }

    /**
     * The storm's race at the linger's end, in virtual time: an asker that comes at the very instant the linger ran out
     * and the half-made session's teardown began is not handed the session being torn down, and gets its answer from a
     * fresh one, whose child starts only once the abandoned one is gone: one child of the connection at every moment.
     * The abandoned one, deaf to EOF behind its gate and to SIGTERM, lives until the ladder's SIGKILL.
     */
    @Test
    void askerAtTheInstantTheLingerRanOutGetsAFreshSessionOnceTheAbandonedOneIsGone() throws IOException {
        PoolHarness h = harness(null);
        Path gate = dir.resolve("gate");
        ConnectionKey key = h.connect("gated", h.fixture("gated", "--start-when=" + gate, "--ignore-sigterm"));
        abandon(h, key);
        long abandoned = h.spawnedPids("gated").get(0);

        timer.advanceTimeBy(LINGER);
        Mono<String> asked = h.pool().withSession(key, session -> session.ping().thenReturn("pong")).cache();
        asked.subscribe(ignored -> { }, error -> { });
        Await.until(() -> {
            boolean fresh = h.spawns("gated") == 2;
            assertThat(fresh && OsProcesses.alive(abandoned)).as("a fresh child started while the abandoned one lived").isFalse();
            return fresh;
        }, BOUND, () -> "a fresh child for the asker");
        assertThat(OsProcesses.alive(abandoned)).isFalse();
        await().atMost(BOUND).until(() -> h.counter("tether.children.teardown", "rung", "kill") == 1.0);
        Files.createFile(gate);

        assertThat(asked.block(BOUND)).isEqualTo("pong");
    }

    @Test
    void startThatFinishesWithNobodyWaitingIsTheWarmSessionAndIdlesOut() {
        PoolHarness h = harness(null);
        ConnectionKey peer = h.connect("peer", h.fixture("peer", "--hang-on-initialize"));
        ConnectionKey key = h.connect("late", h.fixture("late", "--slow-start=800"));
        abandon(h, peer);
        abandon(h, key);
        await().atMost(BOUND).until(() -> h.recorded("late", "notifications/initialized") == 1);
        long pid = h.spawnedPids("late").get(0);

        timer.advanceTimeBy(LINGER);
        OsProcesses.awaitGone(h.spawnedPids("peer"), BOUND); // abandoned with it, never ready: torn down
        assertThat(OsProcesses.alive(pid)).as("ready before the linger ended: kept").isTrue();

        timer.advanceTimeBy(IDLE_TTL.minus(LINGER).minusMillis(1));
        assertThat(h.pool().size()).as("the idle TTL runs from when it became ready").isEqualTo(1);
        timer.advanceTimeBy(Duration.ofMillis(1));
        OsProcesses.awaitGone(List.of(pid), BOUND);
        await().atMost(BOUND).until(() -> h.pool().size() == 0);
    }

    @Test
    void lingeringStartCountsAgainstMaxSessionsAndGivesWayLikeAnIdleSession() {
        PoolHarness h = harness(1);
        ConnectionKey lingering = h.connect("mute", h.fixture("mute", "--hang-on-initialize"));
        ConnectionKey other = h.connect("other", h.fixture("other"));
        abandon(h, lingering);
        await().atMost(BOUND).until(() -> h.recorded("mute", "initialize") == 1);
        assertThat(h.pool().size()).isEqualTo(1);

        StepVerifier.create(h.pool().withSession(other, session -> session.ping().thenReturn("pong")))
                .expectNext("pong").expectComplete().verify(BOUND);
        OsProcesses.awaitGone(h.spawnedPids("mute"), BOUND);
        assertThat(h.pool().size()).as("one session at most").isEqualTo(1);
    }

    @Test
    void lingeringStartIsTornDownByShutdown() {
        PoolHarness h = harness(null);
        ConnectionKey key = h.connect("mute", h.fixture("mute", "--hang-on-initialize"));
        abandon(h, key);
        await().atMost(BOUND).until(() -> h.recorded("mute", "initialize") == 1);

        h.children().stop(); // the daemon's shutdown, mid-linger

        OsProcesses.awaitGone(h.spawnedPids("mute"), BOUND);
        await().atMost(BOUND).until(() -> h.pool().size() == 0);
        assertThat(h.children().live()).isEmpty();
    }

    /** One asker starts the session and leaves once the child is spawned, as a reload abandons its requests. */
    private static void abandon(PoolHarness h, ConnectionKey key) {
        Disposable asker = h.pool().withSession(key, session -> session.ping()).subscribe(ignored -> { }, error -> { });
        await().atMost(BOUND).until(() -> h.spawns(key.integration()) == 1);
        asker.dispose();
    }
}
