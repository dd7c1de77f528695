package dev.tether.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The real Executor 1.5.9 CLI from {@code src/test/clients/node_modules/.bin/executor}, run as a user would: its own
 * {@code HOME} (so its profiles and discovery records are the test's), its own working directory, an environment the
 * test chooses, and a bound on every command.
 */
public final class ExecutorCli {

    private static final Duration BOUND = Duration.ofSeconds(90);

    private final Path executable;
    private final Path home;
    private final Map<String, String> environment = new HashMap<>();

    public ExecutorCli(Path home) {
        this.executable = installed().orElseThrow(() -> new IllegalStateException("the Executor CLI is not installed"));
        this.home = home;
    }

    /** The CLI, when {@code src/test/clients} has its node_modules. */
    public static Optional<Path> installed() {
        Path bin = Fixture.projectRoot().resolve("src/test/clients/node_modules/.bin/executor");
        return Files.isExecutable(bin) ? Optional.of(bin) : Optional.empty();
    }

    /** Adds a variable to the environment of every later command, e.g. {@code EXECUTOR_AUTH_TOKEN}. */
    public ExecutorCli with(String name, String value) {
        environment.put(name, value);
        return this;
    }

    public Path home() {
        return home;
    }

    /** What one command printed and how it ended. */
    public record Result(int exitCode, String stdout, String stderr) {

        public String output() {
            return stdout + stderr;
        }
    }

    /**
     * Executor daemons this CLI started: live processes running {@code executor daemon} with this CLI's {@code HOME}
     * in their environment, found in the OS process table.
     */
    public List<ProcessHandle> daemonsStarted() {
        String marker = "HOME=" + home;
        return ProcessHandle.allProcesses()
                .filter(process -> OsProcesses.commandLine(process.pid()).matches(".*executor.* daemon .*"))
                .filter(process -> environment(process.pid()).contains(marker))
                .toList();
    }

    /** Ends the daemons this CLI started, if any, and waits for them to go. */
    public void stopDaemonsStarted(Duration bound) {
        List<ProcessHandle> daemons = daemonsStarted();
        daemons.forEach(ProcessHandle::destroyForcibly);
        OsProcesses.awaitGone(daemons.stream().map(ProcessHandle::pid).toList(), bound);
    }

    private static List<String> environment(long pid) {
        try {
            return List.of(new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ")),
                    StandardCharsets.UTF_8).split("\\u0000"));
        }
        catch (IOException | SecurityException gone) {
            return List.of();
        }
    }

    /** Runs {@code executor args...} to its end, killing it (and failing) after a bound. */
    public Result run(String... args) {
        try {
            Files.createDirectories(home);
            Path out = Files.createTempFile(home, "cli-", ".out");
            Path err = Files.createTempFile(home, "cli-", ".err");
            List<String> command = new ArrayList<>();
            command.add(executable.toString());
            command.addAll(List.of(args));
            ProcessBuilder builder = new ProcessBuilder(command).directory(home.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile());
            Map<String, String> env = builder.environment();
            env.keySet().removeIf(name -> name.startsWith("EXECUTOR_"));
            env.put("HOME", home.toString());
            env.putAll(environment);
            Process process = builder.start();
            if (!process.waitFor(BOUND.toSeconds(), TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                throw new IllegalStateException("executor " + String.join(" ", args) + " did not end within " + BOUND);
            }
            return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
