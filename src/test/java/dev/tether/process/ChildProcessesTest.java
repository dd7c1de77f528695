package dev.tether.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;

import dev.tether.testsupport.Await;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.LifecycleGuard.Launch;
import dev.tether.testsupport.OsProcesses;

/**
 * {@link ChildProcesses#using}: the child is owned by the pipeline, and whichever way the pipeline ends
 * (completion, error, cancellation, even while the process is being started) the one cleanup for that exit
 * runs and the process is gone; the ledger and the meters follow. Real time, short graces.
 */
class ChildProcessesTest {

    static final ProcessProperties SHORT_GRACES = new ProcessProperties(Duration.ofMillis(300), Duration.ofMillis(500),
            Duration.ofMillis(500), null, null);
    private static final Duration BOUND = Duration.ofSeconds(20);
    private static final Duration LADDER = Duration.ofMillis(1300 + 2000);
    private static final String PING = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    private final MeterRegistry meters = new SimpleMeterRegistry();
    private ChildProcesses children;

    @BeforeEach
    void setUp() {
        children = new ChildProcesses(SHORT_GRACES, ContainerRemover.NONE, guard.tether(), meters,
                Schedulers.newSingle("test-teardown", true));
    }

    @Test
    void childIsTornDownWhenTheBodyCompletes() {
        Launch launch = guard.plain();
        AtomicReference<ChildProcess> seen = new AtomicReference<>();

        StepVerifier.create(children.using(spec(launch), child -> {
                    seen.set(child);
                    return child.send(PING).thenMany(child.stdout().take(1));
                }))
                .assertNext(answer -> assertTrue(answer.contains("\"id\":1"), answer))
                .expectComplete()
                .verify(BOUND);

        ChildProcess child = seen.get();
        TeardownReport report = child.onDispose().block(BOUND);
        assertEquals("completed", child.teardownReason());
        assertEquals(TeardownReport.Rung.EOF, report.rung());
        OsProcesses.awaitGone(List.of(child.pid()), LADDER);
        assertNothingLive();
        assertEquals(1.0, meters.get("tether.children.spawned").tag("kind", "process").counter().count());
        assertEquals(1.0, meters.get("tether.children.teardown").tag("rung", "eof").counter().count());
    }

    @Test
    void childIsTornDownWhenTheBodyFails() {
        Launch launch = guard.plain("--ignore-eof");
        AtomicReference<ChildProcess> seen = new AtomicReference<>();

        StepVerifier.create(children.using(spec(launch), child -> {
                    seen.set(child);
                    return Mono.error(new IllegalStateException("the body failed"));
                }))
                .expectErrorMessage("the body failed")
                .verify(BOUND);

        ChildProcess child = seen.get();
        assertEquals(TeardownReport.Rung.TERM, child.onDispose().block(BOUND).rung());
        assertEquals("failed: java.lang.IllegalStateException: the body failed", child.teardownReason());
        OsProcesses.awaitGone(List.of(child.pid()), LADDER);
        assertNothingLive();
    }

    @Test
    void childIsTornDownWhenTheSubscriberCancels() {
        Launch launch = guard.plain("--ignore-eof", "--ignore-sigterm");
        PublisherProbe<String> body = PublisherProbe.of(Mono.never());
        AtomicReference<ChildProcess> seen = new AtomicReference<>();

        StepVerifier.create(children.using(spec(launch), child -> {
                    seen.set(child);
                    return body.flux();
                }))
                .expectSubscription()
                .then(() -> launch.awaitHostPids(1, BOUND))
                .thenCancel()
                .verify(BOUND);

        body.assertWasCancelled();
        ChildProcess child = seen.get();
        assertEquals(TeardownReport.Rung.KILL, child.onDispose().block(BOUND).rung());
        assertEquals("cancelled", child.teardownReason());
        OsProcesses.awaitGone(List.of(child.pid()), LADDER);
        assertNothingLive();
    }

    /**
     * Cancels at random instants from right after subscribe to well into the handshake: the cancel lands before
     * the fork, during it (the "cancelled while starting" path) or after it, and each time nothing is left.
     */
    @Test
    void cancelWhileStartingNeverStrandsAChild() {
        List<Launch> launches = new ArrayList<>();
        for (int round = 0; round < 12; round++) {
            Launch launch = guard.plain("--ignore-eof");
            launches.add(launch);
            Disposable subscription = children.using(spec(launch), child -> Mono.never())
                    .subscribe(value -> { }, error -> { });
            int delayMicros = round < 4 ? round * 50 : ThreadLocalRandom.current().nextInt(20_000);
            long until = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(delayMicros);
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            subscription.dispose();
        }
        long cancelled = System.nanoTime();
        OsProcesses.awaitNoneMatching(guard.marker(), Await.remaining(cancelled, LADDER));
        for (Launch launch : launches) {
            OsProcesses.awaitGone(launch.hostPids(), Await.remaining(cancelled, LADDER));
        }
        assertNothingLive();
    }

    @Test
    void commandThatDoesNotExistFailsWithChildSpawnException() {
        ChildSpec spec = ChildSpec.of("no-such-command", List.of("/nonexistent/tether-no-such-server", "--flag"));
        PublisherProbe<String> body = PublisherProbe.empty();

        StepVerifier.create(children.using(spec, child -> body.flux()))
                .expectErrorSatisfies(error -> {
                    ChildSpawnException spawn = assertInstanceOf(ChildSpawnException.class, error);
                    assertEquals("no-such-command", spawn.childId());
                    assertTrue(spawn.getMessage().startsWith("cannot start `/nonexistent/tether-no-such-server`: "),
                            spawn.getMessage());
                })
                .verify(BOUND);
        body.assertWasNotSubscribed();
        assertFalse(children.owns("no-such-command"));
        assertNothingLive();
    }

    /**
     * A child that writes 2 MB to stderr synchronously before it even starts the server (node's own stderr is
     * asynchronous and would not block): unless stderr is drained all along, the writer blocks on the full pipe
     * and the server never answers.
     */
    @Test
    void stderrFloodDoesNotBlockTheChildAndOnlyItsTailIsKept() {
        Launch launch = guard.plain();
        List<String> argv = new ArrayList<>(List.of("sh", "-c",
                "head -c 2097152 /dev/zero | tr '\\000' n >&2; exec \"$0\" \"$@\""));
        argv.addAll(launch.argv());
        AtomicReference<String> tail = new AtomicReference<>();

        StepVerifier.create(children.using(ChildSpec.of("noisy", argv), child -> child.send(PING)
                        .thenMany(child.stdout().take(1))
                        .doOnNext(answer -> tail.set(child.stderrTail()))))
                .assertNext(answer -> assertTrue(answer.contains("\"result\""), answer))
                .expectComplete()
                .verify(BOUND);

        String kept = tail.get();
        assertEquals(RealChildren.STDERR_TAIL + 1, kept.length(), "the tail, and an ellipsis for what was dropped");
        assertTrue(kept.startsWith("…nnnn"), () -> kept.substring(0, 20));
    }

    @Test
    void ledgerListsALiveChildAndForgetsItAfterTeardown() throws Exception {
        Launch launch = guard.plain();
        Path ledger = guard.tether().dataDir().resolve("children.ledger");
        AtomicReference<ChildProcess> seen = new AtomicReference<>();

        StepVerifier.create(children.using(spec(launch), child -> {
                    seen.set(child);
                    return Mono.fromCallable(() -> Files.readAllLines(ledger));
                }))
                .assertNext(lines -> {
                    ChildProcess child = seen.get();
                    ProcessStart start = ProcessHandle.of(child.pid()).flatMap(ProcessStart::of).orElseThrow();
                    assertEquals(List.of(child.id() + "\t" + child.pid() + "\t" + start.text() + "\t-"), lines);
                })
                .expectComplete()
                .verify(BOUND);
        seen.get().onDispose().block(BOUND);
        Await.until(() -> readLines(ledger).isEmpty(), BOUND, () -> "an empty ledger: " + readLines(ledger));
    }

    @Test
    void stopTearsDownEveryLiveChildBeforeCallingBack() throws InterruptedException {
        Launch stubborn = guard.plain("--ignore-eof", "--ignore-sigterm");
        Launch polite = guard.plain();
        Disposable sessions = Flux.merge(children.using(spec(stubborn), child -> Mono.never()),
                        children.using(spec(polite), child -> Mono.never()))
                .subscribe(value -> { }, error -> { });
        try {
            Await.until(() -> children.live().size() == 2, BOUND, () -> "two live children: " + children.live());
            List<Long> pids = new ArrayList<>(stubborn.awaitHostPids(1, BOUND));
            pids.addAll(polite.awaitHostPids(1, BOUND));

            CountDownLatch stopped = new CountDownLatch(1);
            children.stop(stopped::countDown);
            assertTrue(stopped.await(LADDER.toMillis(), TimeUnit.MILLISECONDS), "shutdown callback");
            assertFalse(children.isRunning());
            pids.forEach(pid -> assertFalse(OsProcesses.alive(pid), OsProcesses.describe(pid)));
            assertNothingLive();
        }
        finally {
            sessions.dispose();
        }
    }

    @Test
    void noChildIsStartedOnceShutdownHasBegun() {
        // What the pool keeps going on its own (an abandoned start's linger) may ask for a child during shutdown.
        Launch launch = guard.plain();
        children.stop();

        StepVerifier.create(children.using(spec(launch), child -> Mono.never()))
                .expectErrorSatisfies(error -> assertTrue(assertInstanceOf(ChildSpawnException.class, error)
                        .getMessage().contains("the daemon is shutting down"), error.getMessage()))
                .verify(BOUND);
        assertTrue(launch.hostPids().isEmpty(), "no process was started");
        assertNothingLive();
    }

    /** The registry forgets a child just after its teardown reported, so this waits a little. */
    private void assertNothingLive() {
        Await.until(() -> children.live().isEmpty(), BOUND, () -> "no live child: " + children.live());
        assertEquals(0.0, meters.get("tether.children.live").tag("kind", "process").gauge().value());
    }

    private static List<String> readLines(Path file) {
        try {
            return Files.readAllLines(file);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static ChildSpec spec(Launch launch) {
        return ChildSpec.of("t" + Long.toHexString(System.nanoTime()), launch.argv());
    }
}
