package dev.tether.api;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.tether.testsupport.OsProcesses;

/**
 * Processes found by an environment variable, read from {@code /proc/<pid>/environ}: a test registers its
 * servers with a marker variable, and every process they start inherits it, grandchildren that renamed or
 * re-parented themselves included. Asks the OS, not Tether.
 */
final class MarkedProcesses {

    /** The variable a test puts in its servers' environment. */
    static final String VARIABLE = "TETHER_API_TEST_RUN";

    private static final Path PROC = Path.of("/proc");

    private MarkedProcesses() {
    }

    /** Live processes (not zombies) whose environment holds {@code VARIABLE=run}. */
    static List<Long> marked(String run) {
        String marker = VARIABLE + "=" + run;
        long self = ProcessHandle.current().pid();
        try (Stream<Path> entries = Files.list(PROC)) {
            return entries.map(p -> p.getFileName().toString())
                    .filter(name -> name.chars().allMatch(Character::isDigit))
                    .map(Long::parseLong)
                    .filter(pid -> pid != self)
                    .filter(pid -> environHolds(pid, marker))
                    .filter(OsProcesses::alive)
                    .toList();
        }
        catch (IOException ex) {
            return List.of();
        }
    }

    /** Polls until no live process carries the marker; fails after {@code bound}, naming the survivors. */
    static void awaitNone(String run, Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            List<Long> survivors = marked(run);
            if (survivors.isEmpty()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                fail(survivors.size() + " process(es) with " + VARIABLE + "=" + run + " still alive after " + bound + ": "
                        + survivors.stream().map(OsProcesses::describe).collect(Collectors.joining("; ")));
            }
            try {
                Thread.sleep(100);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                fail("interrupted while waiting for processes to go");
            }
        }
    }

    /** SIGKILLs every process carrying the marker; for clean-up after a failed test. */
    static void kill(String run) {
        marked(run).forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    }

    private static boolean environHolds(long pid, String entry) {
        try {
            byte[] environ = Files.readAllBytes(PROC.resolve(Long.toString(pid)).resolve("environ"));
            return Arrays.asList(new String(environ, StandardCharsets.UTF_8).split("\0")).contains(entry);
        }
        catch (IOException | SecurityException ex) {
            return false; // gone, or not ours to read
        }
    }
}
