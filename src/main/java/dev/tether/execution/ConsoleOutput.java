package dev.tether.execution;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * What an execution's code wrote to its console, kept within {@code tether.execution.max-output}. Its own lock, not
 * the execution's: the answer reads the lines from another thread while the code may still be running.
 */
final class ConsoleOutput {

    private final List<String> lines = new ArrayList<>();
    private final long maxBytes;
    private long bytes;

    ConsoleOutput(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** Keeps a line; answers why not when the output would grow past its limit (the prelude throws it in the code). */
    synchronized @Nullable String add(String level, String text) {
        String line = "[" + level + "] " + text;
        long size = line.getBytes(StandardCharsets.UTF_8).length + 1L;
        if (bytes + size > maxBytes) {
            return "console output exceeds the limit of " + maxBytes + " bytes";
        }
        bytes += size;
        lines.add(line);
        return null;
    }

    synchronized List<String> lines() {
        return List.copyOf(lines);
    }
}
