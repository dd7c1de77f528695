package dev.tether.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.tether.process.ChildLedger.Entry;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.LifecycleGuard.Launch;
import dev.tether.testsupport.OsProcesses;

/**
 * A daemon killed with {@code kill -9} runs no teardown; the next daemon on the same data dir kills, from the
 * ledger, every process tree the dead one left, and only those: a pid that now belongs to another process
 * (its start instant differs) is left alone. Simulated in one JVM: the first {@link ChildProcesses} is simply
 * abandoned mid-session, and a second one is started on the same data dir.
 */
class RestartReapingTest {

    private static final Duration BOUND = Duration.ofSeconds(15);

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    @Test
    void childTreeLeftByACrashedDaemonIsKilledWhenTheNextOneStarts() {
        ChildProcesses crashed = children();
        Launch launch = guard.plain("--fork-grandchild", "--ignore-eof", "--ignore-sigterm");
        Disposable abandoned = crashed.using(ChildSpec.of("left-behind", launch.argv()), child -> Mono.never())
                .subscribe(value -> { }, error -> { });
        try {
            List<Long> tree = launch.awaitHostPids(2, BOUND);
            tree.forEach(pid -> assertTrue(OsProcesses.alive(pid), OsProcesses.describe(pid)));

            ChildProcesses restarted = children();
            restarted.start();

            OsProcesses.awaitGone(tree, Duration.ofSeconds(5));
            assertTrue(restarted.isRunning());
            assertEquals(List.of(), ledgerLines(), "the restarted daemon starts with an empty ledger");
        }
        finally {
            abandoned.dispose();
        }
    }

    @Test
    void ledgerEntryWhosePidWasReusedIsNotKilled() throws IOException {
        Launch launch = guard.plain("--ignore-eof");
        Process stranger = startOutsideTether(launch);
        try {
            // The previous daemon's child had this pid, but started an hour before this process did.
            Entry reused = new Entry("old-child", stranger.pid(), startOf(stranger).minus(Duration.ofHours(1)), null);
            Entry gone = new Entry("gone-child", Integer.MAX_VALUE - 1L, Instant.now(), "tether-x-gone-child");
            writeLedger(reused.line(), gone.line(), "garbage that is not an entry");

            children().start();

            // The reaping is done when start() returns; a SIGKILL it sent would be pending before the probe, and the
            // kernel delivers it first: an answer proves the stranger was sent nothing, however slow the host.
            assertEquals(List.of(), launch.probe(stranger.pid(), BOUND), "a process that merely reuses a ledger pid is sent nothing");
            assertTrue(OsProcesses.alive(stranger.pid()), "a process that merely reuses a ledger pid survives");
            assertEquals(List.of(), ledgerLines(), "old entries are forgotten once acted on");
        }
        finally {
            stranger.destroyForcibly();
        }
    }

    @Test
    void ledgerEntryWhoseStartAnotherJvmPlacedASecondApartIsStillKilled() throws IOException {
        Process leftBehind = startOutsideTether(guard.plain("--ignore-eof", "--ignore-sigterm"));
        try {
            // The dead daemon read the kernel's boot time (whole seconds, from the wall clock) before it crossed a
            // second's boundary, this JVM after: the same process, one second earlier in the ledger.
            writeLedger(new Entry("left-behind", leftBehind.pid(), startOf(leftBehind).minusSeconds(1), null).line());

            children().start();

            OsProcesses.awaitGone(List.of(leftBehind.pid()), BOUND);
            assertEquals(List.of(), ledgerLines(), "old entries are forgotten once acted on");
        }
        finally {
            leftBehind.destroyForcibly();
        }
    }

    @Test
    void ledgerEntryRoundTripsThroughItsLine() {
        Entry entry = new Entry("abc123", 4242, Instant.ofEpochMilli(1_700_000_000_123L), "tether-i-abc123");
        assertEquals(entry, Entry.parse(entry.line()).orElseThrow());
        Entry plain = new Entry("def456", 4243, Instant.ofEpochMilli(1_700_000_000_456L), null);
        assertEquals(plain, Entry.parse(plain.line()).orElseThrow());
        assertTrue(Entry.parse("not\tan\tentry").isEmpty());
        assertTrue(Entry.parse("id\tnot-a-pid\t0\t-").isEmpty());
    }

    private ChildProcesses children() {
        return new ChildProcesses(ChildProcessesTest.SHORT_GRACES, ContainerRemover.NONE, guard.tether(),
                new SimpleMeterRegistry(), Schedulers.newSingle("test-teardown", true));
    }

    /** A fixture started by the test itself, not by Tether, once it runs. */
    private Process startOutsideTether(Launch launch) throws IOException {
        Process process = new ProcessBuilder(launch.argv()).start();
        guard.watch(process.pid());
        launch.awaitHostPids(1, BOUND);
        return process;
    }

    private static Instant startOf(Process process) {
        return process.toHandle().info().startInstant().orElseThrow();
    }

    private void writeLedger(String... lines) throws IOException {
        Files.createDirectories(ledger().getParent());
        Files.write(ledger(), List.of(lines));
    }

    private Path ledger() {
        return guard.tether().dataDir().resolve("children.ledger");
    }

    private List<String> ledgerLines() {
        try {
            return Files.exists(ledger()) ? Files.readAllLines(ledger()) : List.of();
        }
        catch (IOException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
