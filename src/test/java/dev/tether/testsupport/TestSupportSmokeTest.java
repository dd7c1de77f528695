package dev.tether.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** Proves the test support works: the image, the fixture in and out of Docker, the OS probes. */
class TestSupportSmokeTest {

    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
            + "\"clientInfo\":{\"name\":\"smoke\",\"version\":\"0\"}}}";

    private final List<Process> started = new ArrayList<>();
    private final String run = UUID.randomUUID().toString();

    @TempDir
    Path tmp;

    @AfterEach
    void cleanUp() {
        started.forEach(p -> p.descendants().forEach(ProcessHandle::destroyForcibly));
        started.forEach(Process::destroyForcibly);
    }

    /** BlockHound is installed in every test JVM ({@link BlockHoundInstaller}): blocking a parallel thread fails. */
    @Test
    void blockingANonBlockingThreadFailsTheTest() {
        StepVerifier.create(Mono.fromCallable(() -> {
                    Thread.sleep(1);
                    return "slept";
                }).subscribeOn(Schedulers.parallel()))
                .expectError(BlockingOperationError.class)
                .verify(Duration.ofSeconds(30));
    }

    @Test
    @RequiresDocker
    void fixtureAnswersInitializeInsideDocker() throws Exception {
        Process docker = start(Fixture.dockerCommand(List.of("--label", "dev.tether.smoke=" + run)));
        try {
            String response = exchange(docker, INITIALIZE);
            assertTrue(response.startsWith("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\""),
                    response);
            assertTrue(response.contains("\"serverInfo\":{\"name\":\"tether-fixture\",\"version\":\"1.0.0\"}"), response);
            assertEquals(1, DockerContainers.withLabel("dev.tether.smoke", run).size(), "container while running");

            docker.getOutputStream().close(); // EOF -> the fixture exits -> --rm removes the container
            assertTrue(docker.waitFor(30, TimeUnit.SECONDS), "docker run should exit after stdin EOF");
            assertEquals(0, docker.exitValue());
            DockerContainers.awaitNoneWithLabel("dev.tether.smoke", run, Duration.ofSeconds(30));
        } finally {
            DockerContainers.removeAllWithLabel("dev.tether.smoke");
        }
    }

    @Test
    @RequiresDocker
    void serverEverythingAnswersInitializeInsideDocker() throws Exception {
        Process docker = start(Fixture.everythingDockerCommand(List.of("--label", "dev.tether.smoke=" + run)));
        try {
            String response = exchange(docker, INITIALIZE);
            assertTrue(response.contains("\"id\":1") && response.contains("\"serverInfo\""), response);
            docker.getOutputStream().close();
            assertTrue(docker.waitFor(30, TimeUnit.SECONDS), "server-everything should exit after stdin EOF");
            DockerContainers.awaitNoneWithLabel("dev.tether.smoke", run, Duration.ofSeconds(30));
        } finally {
            DockerContainers.removeAllWithLabel("dev.tether.smoke");
        }
    }

    @Test
    void grandchildOutlivesTheFixtureUntilKilledAndOsProcessesSeesIt() throws Exception {
        Path pidFile = tmp.resolve("pids");
        Path signals = tmp.resolve("signals");
        Path stderr = tmp.resolve("stderr-" + started.size() + ".log");
        List<String> command = Fixture.command("--fork-grandchild", "--ignore-eof", "--pid-file=" + pidFile, "--signals=" + signals);
        Process fixture = start(command);
        assertTrue(exchange(fixture, INITIALIZE).contains("tether-fixture"));
        List<Long> pids = Files.readAllLines(pidFile).stream().map(Long::parseLong).toList();
        assertEquals(List.of(fixture.pid()), pids.subList(0, 1));
        long grandchild = pids.get(1);

        // Waits for the fixture to say it read the EOF, not for a pause that a slow host could outlast.
        fixture.getOutputStream().close();
        Await.until(() -> contains(stderr, "stdin closed; staying alive"), Duration.ofSeconds(10),
                () -> "the fixture did not report the EOF: " + read(stderr));
        assertTrue(OsProcesses.alive(fixture.pid()), "--ignore-eof keeps the fixture alive");
        assertEquals(List.of(fixture.pid()),
                OsProcesses.matching(pidFile.toString()).stream().map(ProcessHandle::pid).toList());

        // The grandchild answers a probe sent once its parent is gone: alive and sent nothing (LifecycleGuard.Launch.probe).
        fixture.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        LifecycleGuard.Launch launch = new LifecycleGuard.Launch(command, tmp.resolve("record"), pidFile, signals, false);
        assertEquals(List.of(), launch.probe(grandchild, Duration.ofSeconds(10)), "the grandchild survives its parent, unsignalled");
        assertTrue(OsProcesses.alive(grandchild), "the grandchild survives its parent");
        ProcessHandle.of(grandchild).ifPresent(ProcessHandle::destroyForcibly);
        OsProcesses.awaitGone(pids, Duration.ofSeconds(10));
        OsProcesses.awaitNoneMatching(pidFile.toString(), Duration.ofSeconds(10));
    }

    @Test
    void serverEverythingAnswersInitializeAsPlainChild() throws Exception {
        Process everything = start(Fixture.everythingCommand());
        String response = exchange(everything, INITIALIZE);
        assertTrue(response.contains("\"id\":1") && response.contains("\"serverInfo\""), response);
        everything.getOutputStream().close();
        assertTrue(everything.waitFor(30, TimeUnit.SECONDS), "server-everything should exit after stdin EOF");
    }

    private static boolean contains(Path file, String text) {
        return read(file).contains(text);
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        }
        catch (IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    private Process start(List<String> command) throws IOException {
        Process p = new ProcessBuilder(command)
                .redirectError(tmp.resolve("stderr-" + started.size() + ".log").toFile())
                .start();
        started.add(p);
        return p;
    }

    /** Writes one JSON-RPC line and returns the first line of the answer (bounded wait). */
    private String exchange(Process p, String request) throws Exception {
        OutputStream in = p.getOutputStream();
        in.write((request + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        try {
            String answer = line.get(60, TimeUnit.SECONDS);
            assertTrue(answer != null, "stdout closed without an answer; stderr: " + stderr());
            return answer;
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("no answer within 60 s; stderr: " + stderr(), e);
        }
    }

    private String stderr() throws IOException {
        int last = started.size() - 1;
        Path log = tmp.resolve("stderr-" + last + ".log");
        return Files.exists(log) ? Files.readString(log) : "";
    }
}
