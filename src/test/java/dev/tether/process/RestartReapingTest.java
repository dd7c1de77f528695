package dev.tether.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.tether.process.ChildLedger.Entry;
import dev.tether.process.ProcessStart.Kernel;
import dev.tether.process.ProcessStart.WallClock;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.LifecycleGuard.Launch;
import dev.tether.testsupport.OsProcesses;

/**
 * A daemon killed with {@code kill -9} runs no teardown; the next daemon on the same data dir kills, from the
 * ledger, every process tree the dead one left, and only those: a pid that now belongs to another process
 * (its start differs) is left alone. Simulated in one JVM: the first {@link ChildProcesses} is simply
 * abandoned mid-session, and a second one is started on the same data dir. Entries the dead daemon could have
 * written differently from what this JVM would (another boot, another wall clock, the previous ledger format) are
 * written by the tests themselves.
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
        nextStartSpares(stranger -> List.of(
                // The previous daemon's child had this pid, but started before this process did.
                new Entry("old-child", stranger.pid(), earlier(startOf(stranger)), null).line(),
                new Entry("gone-child", Integer.MAX_VALUE - 1L, startOf(stranger), "tether-x-gone-child").line(),
                "garbage that is not an entry"));
    }

    @Test
    void ledgerEntryWhoseStartAnotherJvmPlacedASecondApartIsStillKilled() throws IOException {
        // Where Java's instant is all there is (macOS; a ledger of the previous version): the dead daemon read the
        // kernel's boot time (whole seconds, from the wall clock) before it crossed a second's boundary, this JVM
        // after: the same process, one second earlier in the ledger.
        nextStartKills(leftBehind -> List.of(new Entry("left-behind", leftBehind.pid(),
                new WallClock(leftBehind.toHandle().info().startInstant().orElseThrow().minusSeconds(1)), null).line()));
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void ledgerEntryOfTheKernelsStartIsKilledWhateverTheWallClockDid() throws IOException {
        // What the dead daemon wrote, however far its wall clock was from this one's: the previous version's Java
        // instants moved with it, and after a step of 10 minutes it would have left this process running. Read
        // here from /proc, not by the code under test: nothing in it comes from the wall clock.
        nextStartKills(leftBehind -> List.of(new Entry("left-behind", leftBehind.pid(),
                new Kernel(bootId(), OsProcesses.startTicks(leftBehind.pid())), null).line()));
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void ledgerEntryFromBeforeARebootIsNotKilled() throws IOException {
        // Ticks count from boot, and the first processes of a boot get much the same pids at much the same ticks:
        // pid and ticks are this process's, the boot is another.
        nextStartSpares(stranger -> List.of(new Entry("old-child", stranger.pid(),
                new Kernel(UUID.randomUUID().toString(), OsProcesses.startTicks(stranger.pid())), null).line()));
    }

    @Test
    void ledgerLineOfThePreviousVersionIsStillReaped() throws IOException {
        // A daemon of the version before killed with -9, then the upgrade started on its data dir: child id, pid,
        // Java's start instant in epoch milliseconds, container name or a dash.
        nextStartKills(leftBehind -> List.of("left-behind\t" + leftBehind.pid() + "\t"
                + leftBehind.toHandle().info().startInstant().orElseThrow().toEpochMilli() + "\t-"));
    }

    /** The ledger a dead daemon left, written for a process the test started. */
    @FunctionalInterface
    private interface LedgerFor {
        List<String> lines(Process process) throws IOException;
    }

    /** A process left behind, in a ledger of {@code ledger}'s lines: the next start kills it and forgets the entries. */
    private void nextStartKills(LedgerFor ledger) throws IOException {
        Process leftBehind = startOutsideTether(guard.plain("--ignore-eof", "--ignore-sigterm"));
        try {
            writeLedger(ledger.lines(leftBehind));
            children().start();
            OsProcesses.awaitGone(List.of(leftBehind.pid()), BOUND);
            assertEquals(List.of(), ledgerLines(), "old entries are forgotten once acted on");
        }
        finally {
            leftBehind.destroyForcibly();
        }
    }

    /**
     * A process that merely holds the pid of an entry of {@code ledger}'s lines: the next start sends it nothing and
     * forgets the entries.
     */
    private void nextStartSpares(LedgerFor ledger) throws IOException {
        Launch launch = guard.plain("--ignore-eof");
        Process stranger = startOutsideTether(launch);
        try {
            writeLedger(ledger.lines(stranger));
            children().start();
            // The reaping is done when start() returns; a SIGKILL it sent would be pending before the probe, and the
            // kernel delivers it first: an answer proves the stranger was sent nothing, however slow the host.
            assertEquals(List.of(), launch.probe(stranger.pid(), BOUND), "a process that merely holds a ledger entry's pid is sent nothing");
            assertTrue(OsProcesses.alive(stranger.pid()), "a process that merely holds a ledger entry's pid survives");
            assertEquals(List.of(), ledgerLines(), "old entries are forgotten once acted on");
        }
        finally {
            stranger.destroyForcibly();
        }
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

    private static ProcessStart startOf(Process process) {
        return ProcessStart.of(process.toHandle()).orElseThrow();
    }

    /** A start before {@code start}: another process's, on the same pid. */
    private static ProcessStart earlier(ProcessStart start) {
        if (start instanceof Kernel kernel) {
            return new Kernel(kernel.bootId(), kernel.ticks() - 1); // compared exactly: one tick is another process
        }
        return new WallClock(((WallClock) start).instant().minus(Duration.ofHours(1)));
    }

    private static String bootId() throws IOException {
        return Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
    }

    private void writeLedger(List<String> lines) throws IOException {
        Files.createDirectories(ledger().getParent());
        Files.write(ledger(), lines);
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
