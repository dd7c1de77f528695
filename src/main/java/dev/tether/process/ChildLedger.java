package dev.tether.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.tether.daemon.DataDir;

/**
 * A file listing the live children of this daemon, so that the next start can kill what a {@code kill -9}
 * left behind. An entry is only acted on when both its pid and its start instant still match: pids are
 * reused, start instants are not.
 */
final class ChildLedger {

    private static final Logger log = LoggerFactory.getLogger(ChildLedger.class);

    /**
     * How far apart two JVMs may place one process's start. Linux gives it in ticks since boot; Java adds the boot
     * time, which {@code /proc/stat} gives in whole seconds derived from the wall clock, read once per JVM. Once the
     * clock has been adjusted (NTP on a freshly booted machine), a daemon and its successor can read it either side
     * of a second's boundary and disagree by exactly one second: with strict equality the successor left the whole
     * tree running (a CI run of {@code DaemonKillIT}). A reused pid would need the pid space to wrap within this slack.
     */
    private static final Duration START_SLACK = Duration.ofMillis(1_500);

    record Entry(String childId, long pid, Instant startedAt, @Nullable String containerName) {

        String line() {
            return childId + "\t" + pid + "\t" + startedAt.toEpochMilli() + "\t" + (containerName == null ? "-" : containerName);
        }

        static Optional<Entry> parse(String line) {
            String[] fields = line.split("\t");
            if (fields.length != 4) {
                return Optional.empty();
            }
            try {
                return Optional.of(new Entry(fields[0], Long.parseLong(fields[1]),
                        Instant.ofEpochMilli(Long.parseLong(fields[2])), "-".equals(fields[3]) ? null : fields[3]));
            }
            catch (NumberFormatException ex) {
                return Optional.empty();
            }
        }
    }

    private final Path file;
    private final Map<String, Entry> entries = new LinkedHashMap<>();
    /**
     * Removals come from whatever thread finished a teardown, often a Netty event loop, where file I/O must
     * not run: they are written on this thread of the ledger's own instead.
     */
    private final Scheduler writer = Schedulers.newSingle("tether-ledger", true);

    ChildLedger(Path file) {
        this.file = file;
    }

    synchronized void add(ChildProcess child) {
        entries.put(child.id(), new Entry(child.id(), child.pid(), child.startedAt(), child.containerName().orElse(null)));
        write();
    }

    /** Forgets a child that is gone; the file is rewritten on the ledger's own thread, soon after. */
    void remove(ChildProcess child) {
        writer.schedule(() -> {
            synchronized (this) {
                if (entries.remove(child.id()) != null) {
                    write();
                }
            }
        });
    }

    /**
     * Kills every process tree a previous run of the daemon left alive and forgets the old entries.
     *
     * @return the leftovers that were still alive and were killed
     */
    synchronized List<Entry> reapLeftovers() {
        List<Entry> reaped = new ArrayList<>();
        for (Entry entry : read()) {
            ProcessHandle.of(entry.pid())
                    .filter(handle -> handle.info().startInstant().map(start -> sameStart(start, entry.startedAt())).orElse(false))
                    .ifPresent(handle -> {
                        handle.descendants().forEach(ProcessHandle::destroyForcibly);
                        handle.destroyForcibly();
                        reaped.add(entry);
                        log.warn("child {} (pid {}) outlived the previous daemon run; killed its process tree",
                                entry.childId(), entry.pid());
                    });
        }
        entries.clear();
        write();
        return reaped;
    }

    private static boolean sameStart(Instant seen, Instant recorded) {
        return Duration.between(seen, recorded).abs().compareTo(START_SLACK) <= 0;
    }

    private List<Entry> read() {
        if (!Files.exists(file)) {
            return List.of();
        }
        try {
            return Files.readAllLines(file).stream().map(Entry::parse).flatMap(Optional::stream).toList();
        }
        catch (IOException ex) {
            log.warn("cannot read child ledger {}: {}", file, ex.toString());
            return List.of();
        }
    }

    private void write() {
        try {
            DataDir.writeOwnerOnly(file, entries.values().stream().map(line -> line.line() + "\n").collect(Collectors.joining()));
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot write child ledger " + file, ex);
        }
    }
}
