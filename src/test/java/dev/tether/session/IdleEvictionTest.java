package dev.tether.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.store.ConnectionKey;
import dev.tether.testsupport.OsProcesses;

/**
 * Idle eviction on the pool's own timer, driven in virtual time: the servers are real and answer in real time,
 * only the idle clock is the test's. No wall-clock wait of anything like the idle TTL.
 */
class IdleEvictionTest {

    private static final Duration IDLE_TTL = Duration.ofMinutes(5);
    private static final Duration BOUND = Duration.ofSeconds(15);

    @TempDir
    Path dir;

    private VirtualTimeScheduler idleClock;
    private final AtomicInteger timersArmed = new AtomicInteger();
    private PoolHarness harness;

    @BeforeEach
    void wire() {
        idleClock = VirtualTimeScheduler.create();
        harness = PoolHarness.builder(dir).sessions(new SessionProperties(IDLE_TTL, null, null)).timer(counting(idleClock)).build();
    }

    @AfterEach
    void leaveNothingBehind() {
        harness.close();
        idleClock.dispose();
    }

    @Test
    void sessionUnusedForTheIdleTtlIsTornDownAndOneUsedInBetweenIsKept() {
        ConnectionKey unused = harness.connect("unused", harness.fixture("unused"));
        ConnectionKey used = harness.connect("used", harness.fixture("used"));
        ping(unused);
        ping(used);
        long unusedPid = harness.spawnedPids("unused").get(0);
        long usedPid = harness.spawnedPids("used").get(0);

        idleClock.advanceTimeBy(Duration.ofMinutes(3));
        ping(used); // restarts its idle clock: it is now due at 3 + 5 = 8 min
        idleClock.advanceTimeBy(Duration.ofMinutes(2).minusMillis(1));
        assertThat(harness.pool().size()).as("1 ms before the TTL, both are pooled").isEqualTo(2);
        assertThat(OsProcesses.alive(unusedPid)).isTrue();

        idleClock.advanceTimeBy(Duration.ofMillis(1)); // 5 min: the unused one is due
        assertThat(harness.pool().size()).as("the unused one retired at its TTL").isEqualTo(1);
        OsProcesses.awaitGone(List.of(unusedPid), Duration.ofSeconds(10));
        assertThat(OsProcesses.alive(usedPid)).as("used 2 min ago").isTrue();
        ping(used);
        assertThat(harness.spawns("used")).as("the kept session answers without a new spawn").isEqualTo(1);

        idleClock.advanceTimeBy(IDLE_TTL); // nobody uses it any more
        OsProcesses.awaitGone(List.of(usedPid), Duration.ofSeconds(10));
        await().atMost(BOUND).until(() -> harness.pool().size() == 0);

        ping(unused);
        assertThat(harness.spawns("unused")).as("an evicted connection starts afresh").isEqualTo(2);
    }

    @Test
    void sessionLeasedLongerThanTheIdleTtlIsNotEvicted() {
        ConnectionKey key = harness.connect("long", harness.fixture("long"));
        CountDownLatch leased = new CountDownLatch(1);
        Disposable lease = harness.pool().withSession(key, session -> Mono.fromRunnable(leased::countDown).then(Mono.never()))
                .subscribe();
        await().atMost(BOUND).until(() -> leased.getCount() == 0);

        idleClock.advanceTimeBy(IDLE_TTL.multipliedBy(3));
        assertThat(harness.pool().size()).isEqualTo(1);
        assertThat(OsProcesses.alive(harness.spawnedPids("long").get(0))).as("in use, not idle").isTrue();

        lease.dispose(); // idle from now on
        idleClock.advanceTimeBy(IDLE_TTL.minusMillis(1));
        assertThat(harness.pool().size()).isEqualTo(1);
        idleClock.advanceTimeBy(Duration.ofMillis(1));
        assertThat(harness.pool().size()).isZero();
        OsProcesses.awaitGone(harness.spawnedPids("long"), Duration.ofSeconds(10));
    }

    @Test
    void leasesOfAWarmSessionArmNoTimerAndItStillIdlesOutFromItsLastRelease() {
        ConnectionKey key = harness.connect("busy", harness.fixture("busy"));
        ping(key);
        int armed = timersArmed.get();
        assertThat(armed).as("the idle clock, armed once").isEqualTo(1);

        for (int i = 0; i < 50; i++) {
            idleClock.advanceTimeBy(Duration.ofSeconds(10));
            ping(key);
            // a health check's lease is bounded while its server starts; a warm one is not timed by the pool
            StepVerifier.create(harness.pool().withSession(key, Duration.ofSeconds(20), session -> session.ping().thenReturn("pong")))
                    .expectNext("pong").expectComplete().verify(BOUND);
        }
        assertThat(timersArmed.get()).as("100 leases over 500 s armed only the clock's own re-arms").isLessThanOrEqualTo(armed + 2);

        // last release at 500 s: the clock, re-armed for the rest of the TTL, retires it at 800 s and not before
        idleClock.advanceTimeBy(IDLE_TTL.minusMillis(1));
        assertThat(harness.pool().size()).isEqualTo(1);
        idleClock.advanceTimeBy(Duration.ofMillis(1));
        assertThat(harness.pool().size()).isZero();
        OsProcesses.awaitGone(harness.spawnedPids("busy"), Duration.ofSeconds(10));
    }

    /** The clock, counting the timers armed on it. */
    private Scheduler counting(VirtualTimeScheduler clock) {
        return new Scheduler() {
            @Override
            public Disposable schedule(Runnable task) {
                return clock.schedule(task);
            }

            @Override
            public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
                timersArmed.incrementAndGet();
                return clock.schedule(task, delay, unit);
            }

            @Override
            public long now(TimeUnit unit) {
                return clock.now(unit);
            }

            @Override
            public Worker createWorker() {
                return clock.createWorker();
            }
        };
    }

    private void ping(ConnectionKey key) {
        StepVerifier.create(harness.pool().withSession(key, session -> session.ping().thenReturn("pong")))
                .expectNext("pong").expectComplete().verify(BOUND);
    }
}
