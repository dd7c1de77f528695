package dev.tether.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import dev.tether.process.ChildLedger.Entry;
import dev.tether.process.ProcessStart.Kernel;
import dev.tether.process.ProcessStart.WallClock;

/**
 * The ledger's lines and the starts in them, without a daemon; reaping by them is {@link RestartReapingTest}'s.
 */
class ChildLedgerTest {

    @Test
    void ledgerEntryRoundTripsThroughItsLine() {
        Entry entry = new Entry("abc123", 4242, new Kernel("0f4a6c2e-93b1-4d5e-8a7f-1c2d3e4f5a6b", 123_456), "tether-i-abc123");
        assertEquals(entry, Entry.parse(entry.line()).orElseThrow());
        Entry plain = new Entry("def456", 4243, new WallClock(Instant.ofEpochMilli(1_700_000_000_456L)), null);
        assertEquals(plain, Entry.parse(plain.line()).orElseThrow());
        assertEquals("abc123\t4242\tkernel:0f4a6c2e-93b1-4d5e-8a7f-1c2d3e4f5a6b:123456\ttether-i-abc123", entry.line());
    }

    @Test
    void lineOfThePreviousVersionReadsAsJavasStartInstant() {
        assertEquals(new Entry("abc123", 4242, new WallClock(Instant.ofEpochMilli(1_700_000_000_123L)), "tether-i-abc123"),
                Entry.parse("abc123\t4242\t1700000000123\ttether-i-abc123").orElseThrow());
    }

    @Test
    void malformedLinesAreNotEntries() {
        assertTrue(Entry.parse("not\tan\tentry").isEmpty());
        assertTrue(Entry.parse("id\tnot-a-pid\t0\t-").isEmpty());
        assertTrue(Entry.parse("id\t1\tyesterday\t-").isEmpty());
        assertTrue(Entry.parse("id\t1\tkernel:boot\t-").isEmpty(), "no ticks");
        assertTrue(Entry.parse("id\t1\tkernel::5\t-").isEmpty(), "no boot id");
        assertTrue(Entry.parse("id\t1\tkernel:boot:-5\t-").isEmpty(), "negative ticks");
        assertTrue(Entry.parse("id\t1\tkernel:boot:5:6\t-").isEmpty(), "a field too many");
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void kernelStartIsReadAfterACommandNameThatHoldsParentheses(@TempDir Path dir) throws IOException {
        // The kernel names a process after the file it executes, spaces and parentheses included.
        Path oddName = Files.createSymbolicLink(dir.resolve("a) 1 2 (b"), Path.of("/bin/sleep"));
        Process before = new ProcessBuilder("/bin/sleep", "60").start();
        Process odd = new ProcessBuilder(oddName.toString(), "60").start();
        try {
            assertEquals("a) 1 2 (b", Files.readString(Path.of("/proc", Long.toString(odd.pid()), "comm")).strip());
            long plainTicks = ((Kernel) ProcessStart.of(before.toHandle()).orElseThrow()).ticks();
            long oddTicks = ((Kernel) ProcessStart.of(odd.toHandle()).orElseThrow()).ticks();
            // Started right after the other: counted from the first ')' the ticks would be another field, e.g. 1.
            assertTrue(oddTicks >= plainTicks && oddTicks - plainTicks < 1_000, () -> plainTicks + " then " + oddTicks);
        }
        finally {
            before.destroyForcibly();
            odd.destroyForcibly();
            Files.delete(oddName); // not left for @TempDir, which warns of a link to a file outside it
        }
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void aLiveProcessIsTheStartItWasRecordedWithAndNoOther() throws IOException {
        Process process = new ProcessBuilder("/bin/sleep", "60").start();
        try {
            Kernel start = (Kernel) ProcessStart.of(process.toHandle()).orElseThrow();
            assertTrue(start.isStartOf(process.toHandle()));
            assertFalse(new Kernel(start.bootId(), start.ticks() + 1).isStartOf(process.toHandle()), "a tick later");
            assertFalse(new Kernel(start.bootId() + "0", start.ticks()).isStartOf(process.toHandle()), "another boot");
        }
        finally {
            process.destroyForcibly();
        }
    }
}
