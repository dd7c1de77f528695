package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.github.dockerjava.api.model.Container;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.DockerClientFactory;
import reactor.core.Disposable;

import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.OsProcesses;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.Prerequisites;
import dev.tether.testsupport.RequiresDocker;

/**
 * {@code kill -9} of the packaged daemon while its servers hang in the MCP handshake, deaf to EOF and SIGTERM:
 * the children outlive it (they are orphans now, which shows the test means something), and the next start
 * of a daemon on the same data dir kills every leftover process tree and removes every leftover container,
 * within a bound. Runs the jar Maven built ({@code -Dtether.jar}), as a user would. The plain servers need
 * nothing but the OS; the containers need a Docker engine (see {@link #dockerPart()}).
 */
class DaemonKillIT {

    /**
     * The next start reaps before it serves; this is when the test calls the reaping after the daemon answers stuck
     * (it takes a few seconds; how long is printed).
     */
    private static final Duration REAP_BOUND = Duration.ofSeconds(60);
    private static final Duration ORPHAN_WAIT = Duration.ofSeconds(2);
    private static final String RUN_LABEL = "dev.tether.api.run";
    private static final String[] HANG = { "--hang-on-initialize", "--ignore-eof", "--ignore-sigterm" };

    @TempDir
    Path dataDir;

    private final String run = UUID.randomUUID().toString();
    private final List<PackagedDaemon> daemons = new ArrayList<>();
    private final List<Disposable> requests = new ArrayList<>();

    @AfterEach
    void cleanUp() throws InterruptedException {
        requests.forEach(Disposable::dispose);
        for (PackagedDaemon daemon : daemons) {
            daemon.close();
        }
        MarkedProcesses.kill(run);
        Leftovers.killProcesses(run);
        if (Files.exists(dataDir.resolve("instance-id")) && DockerClientFactory.instance().isDockerAvailable()) {
            Leftovers.removeContainers("tether.instance", DataDirs.instanceId(dataDir));
        }
        Leftovers.removeContainers(RUN_LABEL, run);
    }

    @Test
    void childrenAndContainersOfAKilledDaemonAreReapedByTheNextStart() throws Exception {
        boolean docker = dockerPart();
        PackagedDaemon first = start();
        TetherClient tether = new TetherClient(first.port(), first.token());
        String instance = DataDirs.instanceId(dataDir);
        Path deaf = dataDir.resolve("deaf.pids");
        Path forker = dataDir.resolve("forker.pids");
        check(tether, tether.register("deaf", Fixture.command(flags("--pid-file=" + deaf)), marker()));
        check(tether, tether.register("forker", Fixture.command(flags("--fork-grandchild", "--pid-file=" + forker)), marker()));
        int containers = docker ? 2 : 0;
        List<String> runLabel = List.of("--label", RUN_LABEL + "=" + run);
        for (int i = 0; i < containers; i++) {
            check(tether, tether.register("docker_" + i, Fixture.dockerCommand(runLabel, flags("--pid-file=/tmp/pid-" + run)),
                    marker()));
        }
        // Every server hangs in the handshake: the fixtures (and a grandchild) run, and so do the containers.
        await().atMost(Duration.ofSeconds(60)).until(() -> lines(deaf) == 1 && lines(forker) == 2
                && running(instance, docker).size() == containers);
        List<Long> plain = new ArrayList<>(pids(deaf));
        plain.addAll(pids(forker));
        List<Long> marked = MarkedProcesses.marked(run); // the plain servers, the grandchild, the docker run clients

        first.kill();
        Thread.sleep(ORPHAN_WAIT.toMillis());
        assertThat(plain).as("the children outlive a kill -9 of their daemon").allMatch(OsProcesses::alive);
        assertThat(running(instance, docker)).as("so do the containers").hasSize(containers);
        // The docker run clients may notice their parent is gone and exit; their containers stay.
        System.out.println("[kill-9] after the kill: " + plain.size() + " plain processes and " + containers
                + " containers still running, docker run clients alive: "
                + marked.stream().filter(pid -> !plain.contains(pid)).filter(OsProcesses::alive).count() + " of " + containers);

        PackagedDaemon second = start();
        long served = System.nanoTime();
        OsProcesses.awaitGone(plain, REAP_BOUND);
        if (docker) {
            DockerContainers.awaitNoneWithLabel("tether.instance", instance, REAP_BOUND);
        }
        OsProcesses.awaitGone(marked, REAP_BOUND);
        MarkedProcesses.awaitNone(run, REAP_BOUND);
        OsProcesses.awaitNoneMatching(run, REAP_BOUND);
        System.out.println("[kill-9] " + plain.size() + " orphaned processes and " + containers + " orphaned containers gone "
                + Duration.ofNanos(System.nanoTime() - served).toMillis() + " ms after the restarted daemon answered");
        assertThat(Files.readString(second.log())).contains("outlived the previous daemon run");
        assertThat(new TetherClient(second.port(), second.token()).metrics().sum("tether_children_reaped_total")).as("removed by the restarted daemon's reaper")
                .isEqualTo(containers);
    }

    /**
     * Whether to run the Docker part, as {@link RequiresDocker} decides for a whole test: without an engine it is
     * skipped with a warning, unless CI requires Docker. The plain part runs either way.
     */
    private static boolean dockerPart() {
        if (DockerClientFactory.instance().isDockerAvailable()) {
            return true;
        }
        if (Prerequisites.required()) {
            fail("no Docker engine is reachable, and CI runs every test (.ci/run starts dockerd)");
        }
        System.err.println("[WARNING] no Docker engine: the Docker part of DaemonKillIT is skipped");
        return false;
    }

    // ---- the daemon --------------------------------------------------------------------------------------

    /** Starts the jar Maven built on this test's data dir; returns once it answers. */
    private PackagedDaemon start() throws IOException, InterruptedException {
        PackagedDaemon daemon = PackagedDaemon.start(PackagedDaemon.jarOrSkip(), dataDir,
                // Only the kill may end these sessions: no timeout does first.
                List.of("--tether.mcp.discovery-timeout=300s", "--tether.mcp.ping-timeout=300s", "--tether.health.timeout=300s"),
                Map.of());
        daemons.add(daemon);
        return daemon;
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    /** Starts a health check that will hang in the handshake, and keeps its request open. */
    private void check(TetherClient tether, String slug) {
        requests.add(tether.healthLater(slug).subscribe(reply -> { }, error -> { }));
    }

    private Map<String, String> marker() {
        return Map.of(MarkedProcesses.VARIABLE, run);
    }

    private static String[] flags(String... more) {
        List<String> all = new ArrayList<>(List.of(HANG));
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }

    private static List<Container> running(String instance, boolean docker) {
        if (!docker) {
            return List.of();
        }
        return DockerContainers.withLabel("tether.instance", instance).stream()
                .filter(container -> "running".equals(container.getState()))
                .toList();
    }

    private static long lines(Path file) throws IOException {
        return Files.exists(file) ? Files.readAllLines(file).stream().filter(line -> !line.isBlank()).count() : 0;
    }

    private static List<Long> pids(Path file) throws IOException {
        return Files.readAllLines(file).stream().filter(line -> !line.isBlank()).map(Long::parseLong).toList();
    }
}
