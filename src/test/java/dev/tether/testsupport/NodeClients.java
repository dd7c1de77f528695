package dev.tether.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The real Node clients of {@code src/test/clients} (the TypeScript MCP SDK, the MCP Inspector CLI), run as child
 * processes of the test: {@link #run} for a script or a {@code .bin} entry, whose stdout lines a test reads as they
 * come. Every wait is bounded, and {@link Run#close()} kills what is left.
 */
public final class NodeClients {

    private static final String SDK = "@modelcontextprotocol/sdk/package.json";
    private static final String INSPECTOR = "@modelcontextprotocol/inspector/package.json";
    private static final String SDK_V2 = "@modelcontextprotocol/client/package.json";

    private NodeClients() {
    }

    /** {@code src/test/clients}. */
    public static Path directory() {
        return Fixture.projectRoot().resolve("src/test/clients");
    }

    /** What is missing to run the clients, or empty when nothing is. */
    static Optional<String> missing() {
        try {
            Fixture.nodeBinary();
        } catch (IllegalStateException noNode) {
            return Optional.of("no `node` on PATH");
        }
        Path modules = directory().resolve("node_modules");
        for (String needed : List.of(SDK, SDK_V2, INSPECTOR)) {
            if (!Files.isRegularFile(modules.resolve(needed))) {
                return Optional.of(modules + " lacks " + needed + " (run `npm ci` in src/test/clients)");
            }
        }
        return Optional.empty();
    }

    /**
     * Runs {@code node <script relative to src/test/clients> args...} in {@code src/test/clients}, with a
     * {@code HOME} of its own, so that no client reads or writes the user's settings.
     */
    public static Run run(String script, List<String> args) {
        List<String> command = new ArrayList<>(List.of(Fixture.nodeBinary().toString(), directory().resolve(script).toString()));
        command.addAll(args);
        try {
            Path stderr = Files.createTempFile("node-client-", ".stderr");
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(directory().toFile())
                    .redirectError(stderr.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            builder.environment().put("HOME", Files.createTempDirectory("node-client-home-").toString());
            Process process = builder.start();
            return new Run(command, process, stderr);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A running client: its stdout, line by line, and its end. */
    public static final class Run implements AutoCloseable {

        private final List<String> command;
        private final Process process;
        private final Path stderr;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final List<String> seen = new ArrayList<>();
        private final Thread reader;

        Run(List<String> command, Process process, Path stderr) {
            this.command = command;
            this.process = process;
            this.stderr = stderr;
            this.reader = new Thread(() -> {
                try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line = out.readLine(); line != null; line = out.readLine()) {
                        lines.add(line);
                    }
                } catch (IOException ended) {
                    // the process is gone; what it printed is in the queue
                }
            }, "node-client-stdout");
            reader.setDaemon(true);
            reader.start();
        }

        /** The next stdout line that matches, waiting at most {@code bound}; lines before it are skipped. */
        public String awaitLine(Predicate<String> matching, Duration bound) throws InterruptedException {
            long deadline = System.nanoTime() + bound.toNanos();
            while (true) {
                long left = deadline - System.nanoTime();
                String line = left <= 0 ? null : lines.poll(left, TimeUnit.NANOSECONDS);
                if (line == null) {
                    throw new AssertionError("no matching line within " + bound + " from " + command + "; printed " + seen
                            + "; stderr: " + stderr());
                }
                seen.add(line);
                if (matching.test(line)) {
                    return line;
                }
            }
        }

        /** Every stdout line printed so far. */
        public List<String> printed() {
            lines.drainTo(seen);
            return List.copyOf(seen);
        }

        /** Waits at most {@code bound} for the exit and returns everything printed on stdout. */
        public Ended awaitExit(Duration bound) throws InterruptedException {
            if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                close();
                throw new AssertionError(command + " did not end within " + bound + "; printed " + seen + lines + "; stderr: " + stderr());
            }
            reader.join(TimeUnit.SECONDS.toMillis(10)); // the last lines may still be on their way to the queue
            List<String> out = new ArrayList<>(seen);
            lines.drainTo(out);
            return new Ended(process.exitValue(), out, stderr());
        }

        public String stderr() {
            try {
                return Files.readString(stderr);
            } catch (IOException e) {
                return "(unreadable: " + e + ")";
            }
        }

        @Override
        public void close() {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
                Files.deleteIfExists(stderr);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** How a client ended: its exit code, its stdout lines, its stderr. */
    public record Ended(int exitCode, List<String> stdout, String stderr) {
    }
}
