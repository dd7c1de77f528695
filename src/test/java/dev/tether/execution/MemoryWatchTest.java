package dev.tether.execution;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.identity.Audit;
import dev.tether.replicas.ReplicaIds;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.Prerequisites;

/**
 * The memory watch measures code against the daemon's own memory, learnt again whenever no code runs: a daemon that
 * grew after its first execution does not stop ordinary code, and still stops a bomb. Real executions on a real heap;
 * the watch's ticks and the spacing of its collections run on virtual time.
 */
class MemoryWatchTest {

    private static final long MB = 1 << 20;

    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();
    /** Defaults, but nothing journalled: the code below never pauses, and there is no store. */
    private final ExecutionProperties properties = new ExecutionProperties(null, null, null, null, null, null, null, null, null,
            null, null, false, null);
    private final JsEngine engine = new JsEngine(properties);
    private final ExecutionPool pool = new ExecutionPool(properties);
    private final MemoryWatch memory = new MemoryWatch(properties, time, () -> time.now(TimeUnit.NANOSECONDS));
    // No tool is called: the code below calls none.
    private final Executions executions = new Executions(engine, null, null, null, properties, pool, memory,
            new ReplicaIds("0a1b2c3d", false), null, new SimpleMeterRegistry(), Audit.NONE);

    @AfterEach
    void stop() {
        executions.destroy();
        memory.destroy();
        pool.destroy();
        engine.destroy();
    }

    @Test
    void theBaselineFollowsTheDaemonsOwnGrowthSoOrdinaryCodeRunsWhileABombIsStillStopped() {
        Prerequisites.require(Allocations.supported(), "this JVM does not count allocations per thread",
                "HotSpot does: .ci/run's OpenJDK 17");
        assertThat(run("return 1")).contains("\"result\":1");
        time.advanceTimeBy(MemoryWatch.TICK); // no code live: the baseline is learnt
        long first = memory.baseline();
        assertThat(first).isLessThan(Long.MAX_VALUE);

        // The daemon's own memory grows by three budgets (catalogs, sessions, the engine's caches) and stays.
        List<byte[]> daemonsOwn = new ArrayList<>();
        for (int i = 0; i < 3 * properties.maxMemory().toBytes() / MB; i++) {
            daemonsOwn.add(new byte[(int) MB]);
        }
        System.gc(); // what a daemon keeps for long is in the old generation
        time.advanceTimeBy(Duration.ofSeconds(1)); // no code live: learnt again, full collections half a second apart
        assertThat(memory.baseline()).as("the baseline after the daemon grew by %d MB (%d MB before)", daemonsOwn.size(), first / MB)
                .isGreaterThanOrEqualTo(first + 2 * properties.maxMemory().toBytes());

        // Ordinary code that churns more than a quarter of a budget in garbage, and runs for a while
        String ordinary = "let kept = 0; for (let i = 0; i < 64; i++) kept += new Array(256 * 1024).fill(i).length;"
                + " const end = Date.now() + 1500; while (Date.now() < end) {} return kept";
        assertThat(run(ordinary)).as("an ordinary execution beside the daemon's grown memory").contains("\"result\":" + 64 * 256 * 1024);

        String bomb = "const a = []; while (true) a.push(new Array(1000).fill(7));";
        assertThat(run(bomb)).as("a bomb").contains("the execution was stopped").contains("tether.execution.max-memory");
        assertThat(daemonsOwn).hasSize((int) (3 * properties.maxMemory().toBytes() / MB)); // kept until here
    }

    /** Runs {@code code} while the watch ticks; the answer's structured part. */
    private String run(String code) {
        CompletableFuture<ExecutionAnswer> answer = executions.execute(code).toFuture();
        Await.until(() -> {
            time.advanceTimeBy(MemoryWatch.TICK);
            return answer.isDone();
        }, Duration.ofSeconds(60), () -> "the execution of " + code + " answers");
        return answer.join().structured().toString();
    }
}
