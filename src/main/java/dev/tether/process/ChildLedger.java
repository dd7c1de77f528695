package dev.tether.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * left behind. An entry is only acted on when the process now holding its pid started when the entry says: pids
 * are reused, a pid with its start is not. The start is the kernel's own where Linux gives it, because the instant
 * Java gives moves with the wall clock between two daemons ({@link ProcessStart}).
 */
final class ChildLedger {

    private static final Logger log = LoggerFactory.getLogger(ChildLedger.class);

    /** One line: child id, pid, {@link ProcessStart#text()}, container name or {@code -}, separated by tabs. */
    record Entry(String childId, long pid, ProcessStart start, @Nullable String containerName) {

        String line() {
            return childId + "\t" + pid + "\t" + start.text() + "\t" + (containerName == null ? "-" : containerName);
        }

        static Optional<Entry> parse(String line) {
            String[] fields = line.split("\t");
            if (fields.length != 4) {
                return Optional.empty();
            }
            try {
                long pid = Long.parseLong(fields[1]);
                String containerName = "-".equals(fields[3]) ? null : fields[3];
                return ProcessStart.parse(fields[2]).map(start -> new Entry(fields[0], pid, start, containerName));
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
        // Without its start an entry could not tell this child from the next owner of its pid. A child already gone
        // has none, and nothing left to reap either.
        ProcessHandle.of(child.pid()).flatMap(ProcessStart::of).ifPresent(start -> {
            entries.put(child.id(), new Entry(child.id(), child.pid(), start, child.containerName().orElse(null)));
            write();
        });
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
                    .filter(entry.start()::isStartOf)
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

    private List<Entry> read() {
        if (!Files.exists(file)) {
            return List.of();
        }
        try {
            List<Entry> read = new ArrayList<>();
            for (String line : Files.readAllLines(file)) {
                Entry.parse(line).ifPresentOrElse(read::add,
                        () -> log.warn("child ledger {}: skipped a line that is not an entry: {}", file, line));
            }
            return read;
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
