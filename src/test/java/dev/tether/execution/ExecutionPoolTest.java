package dev.tether.execution;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.test.StepVerifier;

import dev.tether.testsupport.Prerequisites;

/**
 * The executions' own threads: admission with a bounded queue, lanes that keep order, entries at the daemon's priority,
 * lowered when they run long, and host threads that stay at the daemon's priority whoever hands them work.
 */
class ExecutionPoolTest {

    private static final boolean LINUX = Files.isSymbolicLink(Path.of("/proc/thread-self"));

    private final ExecutionPool pool = new ExecutionPool(new ExecutionProperties(null, null, null, null, null, 2, 1, null, null, null, null, null, null));

    @AfterEach
    void stop() {
        pool.destroy();
    }

    @Test
    void admitsUpToTheCapQueuesABoundedNumberAndRefusesTheRestAtOnce() {
        Disposable first = pool.admit(Mono.never()).subscribe();
        Disposable second = pool.admit(Mono.never()).subscribe();
        StepVerifier.create(pool.admit(Mono.just("queued")))
                .then(() -> assertThat(pool.queued()).isEqualTo(1))
                .then(() -> StepVerifier.create(pool.admit(Mono.just("refused")))
                        .expectErrorSatisfies(refused -> assertThat(refused).isInstanceOf(ExecutionRefusedException.class)
                                .hasMessageContaining("2 run and 1 wait").hasMessageContaining("tether.execution.max-concurrent"))
                        .verify(Duration.ofSeconds(5)))
                .then(first::dispose) // a client that leaves gives its place to the one waiting
                .expectNext("queued")
                .expectComplete()
                .verify(Duration.ofSeconds(5));
        second.dispose();
        assertThat(pool.running()).isZero();
    }

    @Test
    void aLaneRunsItsTasksInOrderOneAtATimeAtTheDaemonsPriority() {
        Scheduler lane = pool.lane();
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<String> nice = new CopyOnWriteArrayList<>();
        StepVerifier.create(Flux.range(0, 50).flatMap(i -> Mono.fromRunnable(() -> {
                    order.add(i);
                    nice.add(niceOfThisThread());
                }).subscribeOn(lane)).then())
                .expectComplete()
                .verify(Duration.ofSeconds(20));
        assertThat(order).containsExactlyElementsOf(java.util.stream.IntStream.range(0, 50).boxed().toList());
        if (LINUX) {
            assertThat(nice).as("nice value of short entries").containsOnly(niceOfThisThread());
        }
    }

    @Test
    void anEntryThatRunsLongIsLoweredAndTheNextStartsAgainAtTheDaemonsPriority() {
        Prerequisites.notApplicable(LINUX, "per-thread nice values exist on Linux only (/proc/thread-self)");
        String daemons = niceOfThisThread();
        Scheduler lane = pool.lane();
        List<String> seen = new CopyOnWriteArrayList<>();
        Mono<Void> spin = Mono.fromRunnable(() -> {
            seen.add(niceOfThisThread() + "@" + Thread.currentThread().getName());
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            // spins like an endless loop until its thread is lowered (bounded)
            while (!niceOfThisThread().equals("19") && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            seen.add(niceOfThisThread() + "@" + Thread.currentThread().getName());
        });
        Mono<Void> next = Mono.fromRunnable(() -> seen.add(niceOfThisThread() + "@" + Thread.currentThread().getName()));
        StepVerifier.create(spin.subscribeOn(lane).then(next.subscribeOn(lane)))
                .expectComplete()
                .verify(Duration.ofSeconds(20));
        assertThat(seen).hasSize(3);
        String spinThread = seen.get(0).split("@")[1];
        assertThat(seen.get(0)).as("entered at the daemon's priority").startsWith(daemons + "@");
        assertThat(seen.get(1)).as("lowered once it ran long").isEqualTo("19@" + spinThread);
        assertThat(seen.get(2)).as("the next entry: a fresh thread at the daemon's priority")
                .startsWith(daemons + "@").doesNotEndWith("@" + spinThread);
    }

    @Test
    void whatALoweredEntryHandsOnRunsOnAHostThreadAtTheDaemonsPriority() {
        Prerequisites.notApplicable(LINUX, "per-thread nice values exist on Linux only (/proc/thread-self)");
        String daemons = niceOfThisThread();
        List<String> seen = new CopyOnWriteArrayList<>();
        // An entry that runs until it is lowered, as a loop does (bounded), then hands work to the host threads; no
        // host thread exists yet, so the one that takes it is started now, while a lowered thread asks for it.
        Mono<String> entry = Mono.fromSupplier(() -> {
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (!niceOfThisThread().equals("19") && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            seen.add(niceOfThisThread() + "@" + Thread.currentThread().getName());
            return "entered";
        });
        StepVerifier.create(entry.subscribeOn(pool.lane()).publishOn(pool.host())
                        .doOnNext(entered -> seen.add(niceOfThisThread() + "@" + Thread.currentThread().getName())))
                .expectNext("entered")
                .expectComplete()
                .verify(Duration.ofSeconds(20));
        assertThat(seen.get(0)).as("the entry, lowered").startsWith("19@tether-js-");
        assertThat(seen.get(1)).as("what follows it").startsWith(daemons + "@tether-js-host-");
    }

    private static String niceOfThisThread() {
        try {
            String stat = Files.readString(Path.of("/proc/thread-self/stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).split(" ")[16];
        }
        catch (java.io.IOException ex) {
            return "?";
        }
    }
}
