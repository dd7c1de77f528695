package dev.tether.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.process.ChildProcesses;
import dev.tether.process.ChildSpec;
import dev.tether.process.ProcessProperties;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.RequiresDocker;
import dev.tether.testsupport.TestImages;

/**
 * Which rung ends a real {@code docker run -i --rm --init} child, with the default graces and the real engine: a
 * server that exits on EOF ends there; one that does not is ended by the engine's stop, and its client exits by
 * itself; neither ever needs a signal from Tether, nor Tether's removal of its container.
 */
@RequiresDocker
class DockerTeardownTest {

    private static final Duration BOUND = Duration.ofSeconds(60);

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final DockerEngine engine = new DockerEngine(new DockerProperties(null, null, null), JsonMapper.builder().build());

    @Test
    void serverEverythingEndsOnEof() {
        tearDownOnceRunning(Fixture.everythingDockerCommand(guard.dockerRunOptions()));
        assertEndedAt("eof");
    }

    @Test
    void serverIgnoringEofIsStoppedThroughTheEngineAndItsClientExitsByItself() {
        tearDownOnceRunning(guard.docker("--ignore-eof").argv());
        assertEndedAt("stop");
    }

    @Test
    void serverIgnoringEofAndSigtermIsKilledByTheEngineNotByUs() {
        tearDownOnceRunning(guard.docker("--ignore-eof", "--ignore-sigterm").argv());
        assertEndedAt("stop");
    }

    @Test
    void clientReleasedWhileCreatingItsContainerIsNeverSignalled() {
        // The EOF waits in the client until the container runs; the engine has no container to stop until then.
        ChildProcesses children = children();
        Disposable owner = children.using(spec(guard.docker("--ignore-eof").argv()), child -> Mono.never()).subscribe();
        await().atMost(BOUND).until(() -> !children.live().isEmpty());
        owner.dispose();

        await().atMost(BOUND).until(() -> children.live().isEmpty());
        DockerContainers.awaitNoneWithLabel(LifecycleGuard.RUN_LABEL, guard.marker(), BOUND);
        assertThat(rung("term") + rung("kill")).as("signals needed").isZero();
        assertThat(rung("container")).as("containers Tether had to remove").isZero();
        assertThat(rung("eof") + rung("stop")).isEqualTo(1.0);
    }

    /**
     * A container name can pass on: here the child's container is removed from outside (as a peer replica removes a
     * dead one's) and another container takes its name before the child's teardown climbs. The teardown finds the
     * child's container by the child's own label, so it ends nothing of the newcomer's.
     */
    @Test
    void aTeardownNeverEndsTheContainerThatTookItsChildsNameSince() throws Exception {
        String name = "tether-test-" + guard.marker();
        ChildProcesses children = children();
        AtomicBoolean answered = new AtomicBoolean();
        Disposable owner = children.using(spec(guard.docker(List.of("--name", name), "--ignore-eof").argv()),
                        child -> child.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")
                                .thenMany(child.stdout().doOnNext(line -> answered.set(true)))
                                .then(Mono.never()))
                .subscribe();
        await().atMost(BOUND).untilTrue(answered);
        assertThat(engine.remove(name).block(BOUND)).as("the child's container, removed from outside").isTrue();
        Process newcomer = new ProcessBuilder("docker", "run", "-d", "--name", name, "--label",
                LifecycleGuard.RUN_LABEL + "=" + guard.marker(), TestImages.nodeImage(), "node", "-e", "setInterval(() => {}, 1000)")
                .redirectErrorStream(true).start();
        String started = new String(newcomer.getInputStream().readAllBytes()).strip();
        assertThat(newcomer.waitFor()).as(started).isZero();
        try {
            owner.dispose();
            await().atMost(BOUND).until(() -> children.live().isEmpty());

            assertThat(DockerContainers.withLabel(LifecycleGuard.RUN_LABEL, guard.marker()))
                    .as("the newcomer that took the name").singleElement()
                    .satisfies(container -> assertThat(container.getState()).isEqualTo("running"));
        }
        finally {
            engine.remove(name).block(BOUND);
        }
    }

    private ChildProcesses children() {
        return new ChildProcesses(ProcessProperties.defaults(), guard.tether(), engine, registry);
    }

    private ChildSpec spec(List<String> argv) {
        return new DockerRunRewriter(new InstanceId(guard.tether()))
                .rewrite(ChildSpec.of(UUID.randomUUID().toString().substring(0, 12), argv));
    }

    /** Starts the child, waits until its server answers a ping (so its container runs and it reads stdin), releases it. */
    private void tearDownOnceRunning(List<String> argv) {
        ChildProcesses children = children();
        AtomicBoolean answered = new AtomicBoolean();
        // Any line answers: a result, or an error for a ping before initialize. The client holds it until attached.
        Disposable owner = children.using(spec(argv), child -> child.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")
                        .thenMany(child.stdout().doOnNext(line -> answered.set(true)))
                        .then(Mono.never()))
                .subscribe();
        await().atMost(BOUND).untilTrue(answered);
        owner.dispose();

        await().atMost(BOUND).until(() -> children.live().isEmpty());
        DockerContainers.awaitNoneWithLabel(LifecycleGuard.RUN_LABEL, guard.marker(), BOUND);
    }

    private void assertEndedAt(String expected) {
        assertThat(rung(expected)).as("teardowns at rung " + expected).isEqualTo(1.0);
        for (String other : List.of("eof", "stop", "term", "kill")) {
            if (!other.equals(expected)) {
                assertThat(rung(other)).as("teardowns at rung " + other).isZero();
            }
        }
        assertThat(rung("container")).as("containers Tether had to remove").isZero();
    }

    private double rung(String rung) {
        return registry.find("tether.children.teardown").tag("rung", rung).counters().stream()
                .mapToDouble(Counter::count).sum();
    }
}
