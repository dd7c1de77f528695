package dev.tether.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.mcp.McpProperties;
import dev.tether.mcp.McpSessions;
import dev.tether.mcp.StdioServer;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ProcessProperties;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.LifecycleGuard.Launch;
import dev.tether.testsupport.RequiresDocker;
import dev.tether.testsupport.TestImages;

/**
 * The reaper removes containers labelled with this instance that no live child owns (what a killed daemon
 * left, or a container created after its teardown's removal ran) and never one a live child still uses.
 * Asks the Docker engine directly what exists.
 */
@RequiresDocker
class ContainerReaperTest {

    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final ProcessProperties SHORT_GRACES = new ProcessProperties(Duration.ofMillis(300),
            Duration.ofMillis(500), Duration.ofMillis(500), null, null);

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    private final MeterRegistry meters = new SimpleMeterRegistry();
    private DockerEngine engine;
    private ChildProcesses children;
    private ContainerReaper reaper;

    @BeforeEach
    void setUp() {
        engine = new DockerEngine(new DockerProperties(null, null, null), JsonMapper.builder().build());
        children = new ChildProcesses(SHORT_GRACES, guard.tether(), engine, meters);
        reaper = new ContainerReaper(engine, new InstanceId(guard.tether()), children,
                new DockerProperties(null, null, null), meters);
    }

    @Test
    void containerOfThisInstanceOwnedByNoLiveChildIsRemovedWhileALiveChildsContainerIsKept() {
        String ghost = startGhost(guard.instanceId(), "ghost");
        startGhost("0ther1d0", "someone-elses");
        Launch launch = guard.docker();
        McpSessions sessions = new McpSessions(children, new DockerRunRewriter(new InstanceId(guard.tether())),
                McpProperties.defaults());
        Disposable session = sessions.withSession(StdioServer.of("fixture", launch.argv()),
                        mcp -> mcp.callTool("hang", Map.of()))
                .subscribe(result -> { }, error -> { });
        try {
            launch.awaitRecorded("tools/call", BOUND);
            assertEquals(2, DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, guard.instanceId()).size(),
                    "the ghost and the live child's container");

            StepVerifier.create(reaper.reapOnce())
                    .expectNext(1L)
                    .expectComplete()
                    .verify(BOUND);

            List<String> left = DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, guard.instanceId()).stream()
                    .map(container -> container.getLabels().get("tether.session")).toList();
            assertEquals(1, left.size(), "only the live child's container is left: " + left);
            assertTrue(children.owns(left.get(0)), "it belongs to the live child");
            assertTrue(DockerContainers.withLabel(LifecycleGuard.RUN_LABEL, guard.marker()).stream()
                    .noneMatch(container -> container.getId().equals(ghost)), "the ghost is gone");
            assertEquals(1, DockerContainers.withLabel("tether.instance", "0ther1d0").size(),
                    "another instance's container is not ours to reap");
            assertEquals(1.0, meters.get("tether.children.reaped").counter().count());
        }
        finally {
            session.dispose();
            DockerContainers.withLabel("tether.instance", "0ther1d0").forEach(container ->
                    engine.remove(container.getId()).block(BOUND));
        }
    }

    @Test
    void aDeadReplicasContainersAreRemovedOnlyWhileTheStoreStillTakesItForDead() {
        String dead = "dead" + guard.marker().substring(0, 4);
        startGhost(dead, "left-by-a-dead-replica");

        StepVerifier.create(reaper.reapReplica(dead, Mono.just(false)))
                .as("the replica came back under the same id: the container is its own")
                .expectNext(0L)
                .expectComplete()
                .verify(BOUND);
        assertEquals(1, DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, dead).size());

        StepVerifier.create(reaper.reapReplica(dead, Mono.just(true)))
                .expectNext(1L)
                .expectComplete()
                .verify(BOUND);
        assertEquals(List.of(), DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, dead));
    }

    @Test
    void reapingWithNothingToReapRemovesNothing() {
        StepVerifier.create(reaper.reapOnce())
                .expectNext(0L)
                .expectComplete()
                .verify(BOUND);
    }

    @Test
    void startReapsLeftoversOfAPreviousRunAndStopEndsTheSchedule() {
        startGhost(guard.instanceId(), "left-by-a-killed-daemon");

        reaper.start();
        try {
            assertTrue(reaper.isRunning());
            DockerContainers.awaitNoneWithLabel(LifecycleGuard.INSTANCE_LABEL, guard.instanceId(), BOUND);
        }
        finally {
            reaper.stop();
        }
        assertFalse(reaper.isRunning());
    }

    @Test
    void engineRemovesAContainerByNameAndThenFindsNothingToRemove() {
        String id = startGhost(guard.instanceId(), "removed-twice");
        String name = DockerContainers.withLabel(LifecycleGuard.RUN_LABEL, guard.marker()).stream()
                .filter(container -> container.getId().equals(id))
                .map(container -> container.getNames()[0].substring(1))
                .findFirst().orElseThrow();

        StepVerifier.create(engine.remove(name).concatWith(engine.remove(name)).concatWith(Mono.defer(
                        () -> engine.remove("tether-no-such-container-" + guard.marker()))))
                .expectNext(true, false, false)
                .expectComplete()
                .verify(BOUND);
        assertEquals(List.of(), DockerContainers.withLabel(LifecycleGuard.RUN_LABEL, guard.marker()));
    }

    /** Starts, by hand, a container labelled as Tether labels its own, running an idle node. */
    private String startGhost(String instance, String session) {
        List<String> command = new ArrayList<>(List.of("docker", "run", "-d",
                "--label", "tether.instance=" + instance, "--label", "tether.session=" + session,
                "--label", Fixture.DOCKER_LABEL + "=true", "--label", LifecycleGuard.RUN_LABEL + "=" + guard.marker(),
                TestImages.nodeImage(), "node", "-e", "setInterval(() => {}, 1000)"));
        try {
            Process docker = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(docker.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            assertTrue(docker.waitFor(60, TimeUnit.SECONDS), "docker run -d returns");
            assertEquals(0, docker.exitValue(), out);
            String id = out.lines().reduce((first, second) -> second).orElseThrow();
            Await.until(() -> DockerContainers.withLabel(LifecycleGuard.RUN_LABEL, guard.marker()).stream()
                    .anyMatch(container -> container.getId().equals(id)), BOUND, () -> "container " + out);
            return id;
        }
        catch (IOException ex) {
            throw new IllegalStateException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
