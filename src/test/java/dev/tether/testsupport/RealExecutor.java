package dev.tether.testsupport;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;


/**
 * The real Executor 1.5.9 daemon ({@code executor web} of the npm package in {@code src/test/clients}), the judge of
 * Tether's answers: on a free loopback port, with a HOME and a scope of its own under {@code dir}, its log in
 * {@code dir/executor.log}. When the CLI is not installed the calling test is skipped with a warning; in CI
 * ({@code CI=true}) its absence fails.
 */
public final class RealExecutor implements AutoCloseable {

    /** When a start is called stuck, on two cores shared with other test JVMs: only a failure waits this long. */
    private static final Duration START_BOUND = Duration.ofSeconds(180);

    private final Process process;
    private final int port;

    private RealExecutor(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts it and waits, bounded, until it answers on its port. */
    public static RealExecutor start(Path dir, String token, String testName) throws IOException, InterruptedException {
        Path cli = Fixture.projectRoot().resolve("src/test/clients/node_modules/.bin/executor");
        Prerequisites.require(Files.isExecutable(cli), "the Executor 1.5.9 CLI is not installed at " + cli + " (" + testName + ")",
                ".ci/run runs npm install in src/test/clients");
        Path home = Files.createDirectories(dir.resolve("executor-home"));
        Path scope = Files.createDirectories(dir.resolve("executor-scope"));
        Path log = dir.resolve("executor.log");
        int port = Fixture.freeLoopbackPort();
        ProcessBuilder builder = new ProcessBuilder(cli.toString(), "web", "--port", Integer.toString(port),
                "--hostname", "127.0.0.1", "--auth-token", token, "--scope", scope.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().put("HOME", home.toString());
        RealExecutor executor = new RealExecutor(builder.start(), port);
        long deadline = System.nanoTime() + START_BOUND.toNanos();
        while (!answers(port)) {
            if (!executor.process.isAlive() || System.nanoTime() > deadline) {
                executor.close();
                fail("the Executor daemon did not start: " + Files.readString(log));
            }
            Thread.sleep(200);
        }
        return executor;
    }

    public int port() {
        return port;
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    @Override
    public void close() throws InterruptedException {
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
    }

    private static boolean answers(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        }
        catch (IOException ex) {
            return false;
        }
    }
}
