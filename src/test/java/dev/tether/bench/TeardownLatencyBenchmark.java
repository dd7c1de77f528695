package dev.tether.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import reactor.core.Disposable;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.daemon.TetherProperties;
import dev.tether.docker.DockerEngine;
import dev.tether.docker.DockerProperties;
import dev.tether.docker.DockerRunRewriter;
import dev.tether.docker.InstanceId;
import dev.tether.mcp.McpProperties;
import dev.tether.mcp.McpSessions;
import dev.tether.mcp.StdioServer;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ProcessProperties;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;

/**
 * How long, with the default graces, from cancelling a session mid {@code tools/call} until the Docker engine no longer
 * lists its container: for a server that exits on EOF and for one that ignores EOF and SIGTERM. Beside each, the raw
 * floor measured in the same run without Tether: the same container's {@code docker run} client given EOF by hand,
 * and {@code docker rm -f} of it. The cancellation matrix asserts that nothing is left; this prints how fast.
 * Run it with {@code bench/teardown.sh [rounds=10]}.
 */
public final class TeardownLatencyBenchmark {

    /** A round that takes longer is reported stuck, and the benchmark stops. */
    private static final Duration STUCK = Duration.ofSeconds(120);
    private static final String RUN_LABEL = "tether.bench.run";

    private TeardownLatencyBenchmark() {
    }

    public static void main(String[] argv) throws Exception {
        BenchArguments args = BenchArguments.parse(argv);
        int rounds = args.integer("rounds", 10);
        Path dir = Files.createTempDirectory("tether-bench-teardown");
        TetherProperties tether = new TetherProperties(dir.resolve("data"));
        InstanceId instance = new InstanceId(tether);
        ChildProcesses children = new ChildProcesses(ProcessProperties.defaults(), tether,
                new DockerEngine(new DockerProperties(null, null, null), JsonMapper.builder().build()), new SimpleMeterRegistry());
        McpSessions sessions = new McpSessions(children, new DockerRunRewriter(instance), McpProperties.defaults());
        System.out.printf("teardown: %d rounds each, default graces %s, %d cores%n", rounds, ProcessProperties.defaults(),
                Runtime.getRuntime().availableProcessors());

        for (List<String> flags : List.of(List.<String>of(), List.of("--ignore-eof", "--ignore-sigterm"))) {
            List<Long> cancelled = new ArrayList<>();
            List<Long> floor = new ArrayList<>();
            for (int round = 0; round < rounds; round++) {
                cancelled.add(cancelThroughTether(sessions, instance, dir, flags));
                floor.add(flags.isEmpty() ? eofByHand(dir) : removedByHand(dir));
            }
            String server = flags.isEmpty() ? "respecting EOF" : String.join(" ", flags);
            print("teardown: docker server " + server + ", cancel -> container gone", cancelled);
            print("teardown: the same without Tether, " + (flags.isEmpty() ? "EOF by hand" : "docker rm -f")
                    + " -> container gone", floor);
        }
        System.exit(0);
    }

    private static long cancelThroughTether(McpSessions sessions, InstanceId instance, Path dir, List<String> flags) {
        Path record = dir.resolve(UUID.randomUUID() + ".record");
        List<String> all = new ArrayList<>(flags);
        all.add("--record=" + record);
        List<String> argv = Fixture.dockerCommand(List.of("-v", dir + ":" + dir), all.toArray(String[]::new));
        Disposable session = sessions.withSession(StdioServer.of("fixture", argv), mcp -> mcp.callTool("hang", Map.of()))
                .subscribe(result -> { }, error -> { });
        Await.until(() -> read(record).contains("tools/call"), STUCK, () -> "the fixture got its tools/call");
        long cancelledAt = System.nanoTime();
        session.dispose();
        DockerContainers.awaitNoneWithLabel("tether.instance", instance.value(), STUCK);
        return (System.nanoTime() - cancelledAt) / 1_000_000;
    }

    /** A {@code docker run -i --rm} client of the same fixture, its stdin closed by hand once the container runs. */
    private static long eofByHand(Path dir) throws Exception {
        String run = UUID.randomUUID().toString();
        Process client = new ProcessBuilder(Fixture.dockerCommand(List.of("--label", RUN_LABEL + "=" + run)))
                .redirectErrorStream(true).redirectOutput(dir.resolve(run + ".log").toFile()).start();
        awaitRunning(run);
        long closedAt = System.nanoTime();
        client.getOutputStream().close();
        DockerContainers.awaitNoneWithLabel(RUN_LABEL, run, STUCK);
        return (System.nanoTime() - closedAt) / 1_000_000;
    }

    /** The same fixture deaf to EOF and SIGTERM, removed with {@code docker rm -f} once it runs. */
    private static long removedByHand(Path dir) throws Exception {
        String run = UUID.randomUUID().toString();
        Process client = new ProcessBuilder(Fixture.dockerCommand(List.of("--label", RUN_LABEL + "=" + run),
                "--ignore-eof", "--ignore-sigterm")).redirectErrorStream(true).redirectOutput(dir.resolve(run + ".log").toFile()).start();
        String id = awaitRunning(run);
        long removedAt = System.nanoTime();
        Process remove = new ProcessBuilder("docker", "rm", "-f", id).redirectErrorStream(true).start();
        remove.getInputStream().readAllBytes();
        remove.waitFor();
        DockerContainers.awaitNoneWithLabel(RUN_LABEL, run, STUCK);
        long took = (System.nanoTime() - removedAt) / 1_000_000;
        client.destroyForcibly().waitFor();
        return took;
    }

    private static void print(String label, List<Long> millis) {
        System.out.printf("%s: p50 %.0f ms, min %.0f ms, max %.0f ms (%d samples)%n", label, Samples.p50(millis, Long::doubleValue),
                Samples.min(millis, Long::doubleValue), Samples.max(millis, Long::doubleValue), millis.size());
    }

    private static String awaitRunning(String run) {
        Await.until(() -> DockerContainers.withLabel(RUN_LABEL, run).stream().anyMatch(c -> "running".equals(c.getState())), STUCK,
                () -> "the container of run " + run + " runs");
        return DockerContainers.withLabel(RUN_LABEL, run).get(0).getId();
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        }
        catch (java.io.IOException ex) {
            return "";
        }
    }
}
