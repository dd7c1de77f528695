package dev.tether.testsupport;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

/**
 * The real Executor 1.5.9 daemon ({@code executor web} from {@code src/test/clients}) on a free loopback port, with
 * its own {@code HOME} and scope under the directory given, to send the same requests to as to Tether. Absent, the
 * test that wants it is skipped with a warning, except in CI ({@code CI=true}), where its absence fails.
 */
public final class ExecutorDaemon implements AutoCloseable {

    private static final Duration START_BOUND = Duration.ofSeconds(60);

    private final Process process;
    private final int port;

    private ExecutorDaemon(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts it with {@code token} as its API token and waits (bounded) until it listens; its output goes to {@code dir/executor.log}. */
    public static ExecutorDaemon start(Path dir, String token) {
        Path cli = Fixture.projectRoot().resolve("src/test/clients/node_modules/.bin/executor");
        if (!Files.isExecutable(cli)) {
            String why = "the Executor 1.5.9 CLI is not installed (npm ci in src/test/clients): " + cli;
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail(why);
            }
            System.err.println("[WARNING] " + why + "; the test is skipped");
            Assumptions.abort(why);
        }
        try {
            Path home = Files.createDirectories(dir.resolve("executor-home"));
            Path scope = Files.createDirectories(dir.resolve("executor-scope"));
            Path log = dir.resolve("executor.log");
            int port = Fixture.freeLoopbackPort();
            ProcessBuilder builder = new ProcessBuilder(cli.toString(), "web", "--port", Integer.toString(port),
                    "--hostname", "127.0.0.1", "--auth-token", token, "--scope", scope.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            builder.environment().put("HOME", home.toString());
            ExecutorDaemon daemon = new ExecutorDaemon(builder.start(), port);
            long deadline = System.nanoTime() + START_BOUND.toNanos();
            while (!daemon.listening()) {
                if (!daemon.process.isAlive() || System.nanoTime() > deadline) {
                    daemon.close();
                    fail("the Executor daemon did not start: " + Files.readString(log));
                }
                Thread.sleep(200);
            }
            return daemon;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    public int port() {
        return port;
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    private boolean listening() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        }
        catch (IOException ex) {
            return false;
        }
    }

    /** Ends it and what it started, forcibly after 10 s. */
    @Override
    public void close() {
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
