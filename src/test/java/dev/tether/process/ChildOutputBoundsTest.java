package dev.tether.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.OsProcesses;

/**
 * A child that floods stdout faster than it is read, or writes a line without end, fails with a clear error
 * and is torn down instead of growing the heap; the ledger does its file I/O off non-blocking threads.
 */
class ChildOutputBoundsTest {

    private static final Duration BOUND = Duration.ofSeconds(20);

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    private ChildProcesses children;

    @BeforeEach
    void setUp() {
        ProcessProperties bounded = new ProcessProperties(Duration.ofMillis(300), Duration.ofMillis(500), Duration.ofMillis(500),
                null, null, null, null, 100, DataSize.ofKilobytes(64));
        children = new ChildProcesses(bounded, ContainerRemover.NONE, guard.tether(), new SimpleMeterRegistry(),
                Schedulers.newSingle("test-teardown", true));
    }

    @Test
    void aChildThatFloodsStdoutUnreadFailsItsReaderAndIsTornDown() {
        AtomicReference<ChildProcess> seen = new AtomicReference<>();
        // Nothing is requested: every line the child writes waits in Tether's buffer.
        StepVerifier.create(children.using(ChildSpec.of("flood", List.of("yes", "{\"jsonrpc\":\"2.0\"}")), child -> {
                    seen.set(child);
                    return child.stdout();
                }), 0)
                .expectSubscription()
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(ChildOutputOverflowException.class)
                        .hasMessageContaining("more than 100 lines")
                        .hasMessageContaining("tether.process.stdout-buffer-lines"))
                .verify(BOUND);

        ChildProcess child = seen.get();
        child.onDispose().block(BOUND);
        OsProcesses.awaitGone(List.of(child.pid()), BOUND);
    }

    @Test
    void aLineWithoutEndFailsOnceItOutgrowsTheBound() {
        AtomicReference<ChildProcess> seen = new AtomicReference<>();
        StepVerifier.create(children.using(ChildSpec.of("endless", List.of("sh", "-c", "head -c 1048576 /dev/zero | tr '\\000' x; sleep 30")),
                        child -> {
                            seen.set(child);
                            return child.stdout();
                        }))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(ChildOutputOverflowException.class)
                        .hasMessageContaining("a line longer than 65536 bytes"))
                .verify(BOUND);

        ChildProcess child = seen.get();
        child.onDispose().block(BOUND);
        OsProcesses.awaitGone(List.of(child.pid()), BOUND);
    }

    /** Teardowns often end on a Netty event loop; BlockHound fails a file write made there. */
    @Test
    void theLedgerForgetsAChildWithoutFileIoOnTheCallingNonBlockingThread() {
        Path file = guard.tether().dataDir().resolve("ledger-test");
        ChildLedger ledger = new ChildLedger(file);

        StepVerifier.create(children.using(ChildSpec.of("listed", guard.plain().argv()), child -> Mono.fromRunnable(() -> ledger.add(child))
                        .then(Mono.fromRunnable(() -> ledger.remove(child)).subscribeOn(Schedulers.parallel()))))
                .expectComplete()
                .verify(BOUND);

        Awaitility.await().atMost(BOUND).until(() -> Files.readAllLines(file).isEmpty());
    }
}
