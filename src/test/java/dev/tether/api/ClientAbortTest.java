package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.github.dockerjava.api.model.Container;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpMethod;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import reactor.core.Disposable;

import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.OsProcesses;
import dev.tether.testsupport.RequiresDocker;

/**
 * One client goes away mid-request: the server it started, stuck in the MCP handshake and deaf to EOF and
 * SIGTERM, is gone (process tree, container) after the disconnect. The discovery and health timeouts (120 s) are
 * set beyond the test's wait and the periodic reaper is off, so only the client's cancellation can explain the
 * cleanup; how soon it comes is printed, not judged (the ladder's timing is TeardownLadderTest's, in virtual time).
 * The session is still being made when its only asker leaves, so the pool must not keep it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "tether.process.eof-grace=500ms", "tether.process.term-grace=500ms", "tether.process.kill-grace=1s",
        "tether.mcp.discovery-timeout=120s", "tether.mcp.ping-timeout=120s", "tether.health.timeout=120s",
        "tether.session.idle-ttl=100ms", "tether.docker.reap-interval=1h",
        // An abandoned start is torn down at once here, as these tests are about what an abort tears down.
        "tether.session.abandoned-start-linger=0s" })
@DirtiesContext
@InProcess
class ClientAbortTest {

    /** eof + term + kill graces set above. */
    private static final Duration LADDER = Duration.ofMillis(500 + 500 + 1000);
    /** How long the cleanup may take before the test calls it stuck: well short of the 120 s timeouts set above. */
    private static final Duration GONE_BOUND = Duration.ofSeconds(60);
    private static final Duration STARTUP_BOUND = Duration.ofSeconds(30);

    private static final Path DATA_DIR = DataDirs.create("abort");
    private static final String RUN = UUID.randomUUID().toString();
    private static final String RUN_LABEL = "dev.tether.api.run";
    private static final String HANG = "--hang-on-initialize";

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @LocalServerPort
    int port;

    private TetherClient tether;
    private String instance;
    private Path work;

    @BeforeEach
    void connect() throws IOException {
        tether = new TetherClient(port, DataDirs.token(DATA_DIR));
        instance = DataDirs.instanceId(DATA_DIR);
        work = Files.createDirectories(DATA_DIR.resolve("work-" + UUID.randomUUID()));
    }

    @AfterEach
    void cleanUp() {
        if (instance != null) {
            Leftovers.removeContainers("tether.instance", instance);
        }
        Leftovers.removeContainers(RUN_LABEL, RUN);
        Leftovers.killProcesses(RUN);
        MarkedProcesses.kill(RUN);
        if (work != null) {
            Leftovers.killProcesses(work.toString());
        }
    }

    @Test
    @RequiresDocker
    void clientAbortMidHandshakeRemovesContainer() {
        String record = "/tmp/record-" + RUN;
        String slug = tether.register("hang_docker", Fixture.dockerCommand(List.of("--label", RUN_LABEL + "=" + RUN),
                HANG, "--ignore-eof", "--ignore-sigterm", "--record=" + record), marker());
        double cancelledBefore = tether.metrics().healthChecks("cancelled");

        Disposable request = tether.healthLater(slug).subscribe(reply -> { }, error -> { });
        // Mid-handshake means: the engine runs the container, and the fixture inside it got initialize (read
        // from the host through /proc/<pid>/root), which it never answers.
        await().atMost(STARTUP_BOUND).pollInterval(Duration.ofMillis(100)).until(() ->
                runningContainers().size() == 1 && recordedInContainer(record).contains("initialize"));
        assertThat(request.isDisposed()).as("the check is still waiting for the handshake").isFalse();
        String container = DockerContainers.describe(runningContainers().get(0));

        long disconnected = System.nanoTime();
        request.dispose();

        DockerContainers.awaitNoneWithLabel("tether.instance", instance, GONE_BOUND);
        OsProcesses.awaitNoneMatching(RUN, GONE_BOUND);
        Duration took = Duration.ofNanos(System.nanoTime() - disconnected);
        System.out.println("[client-abort] container " + container + " gone " + took.toMillis()
                + " ms after the client disconnected (ladder " + LADDER.toMillis() + " ms)");

        await().atMost(GONE_BOUND).until(() -> tether.metrics().healthChecks("cancelled") > cancelledBefore);
        assertThat(tether.get("/api/connections/org/" + slug + "/default").json().has("lastHealth"))
                .as("a cancelled check persists no verdict").isFalse();
    }

    @Test
    void clientAbortMidHandshakeKillsTheWholeProcessTree() throws IOException {
        Path pids = work.resolve("pids");
        Path record = work.resolve("record");
        String slug = tether.register("hang_plain", Fixture.command(HANG, "--ignore-eof", "--ignore-sigterm",
                "--fork-grandchild", "--pid-file=" + pids, "--record=" + record), marker());

        Disposable request = tether.healthLater(slug).subscribe(reply -> { }, error -> { });
        await().atMost(STARTUP_BOUND).until(() -> recorded(record).contains("initialize"));
        List<Long> tree = Files.readAllLines(pids).stream().map(Long::parseLong).toList();
        assertThat(tree).as("fixture and grandchild").hasSize(2);
        assertThat(tree).allMatch(OsProcesses::alive);

        long disconnected = System.nanoTime();
        request.dispose();

        OsProcesses.awaitGone(tree, GONE_BOUND);
        System.out.println("[client-abort] process tree " + tree + " gone "
                + Duration.ofNanos(System.nanoTime() - disconnected).toMillis() + " ms after the client disconnected");
        await().atMost(GONE_BOUND).until(() -> tether.metrics().live() == 0);
    }

    /**
     * The storm's race, driven rather than aimed at: a check is abandoned while its server starts, and once the daemon
     * has counted it cancelled (the half-made session's teardown has begun), a refresh of the same connection asks for a
     * session while that server still lives: held back by a gate and deaf to SIGTERM, it lives until the ladder's
     * SIGKILL. Each round checks that its refresh was sent inside that window; the refresh must get an answer from a
     * fresh session, never wait on the one being torn down.
     */
    @Test
    void aRefreshAskingWhileAnAbandonedStartIsTornDownGetsAFreshSession() throws Exception {
        Path gate = work.resolve("gate");
        String slug = tether.register("joined", Fixture.command("--start-when=" + gate, "--ignore-sigterm"), marker());

        for (int round = 0; round < 5; round++) {
            Files.deleteIfExists(gate);
            double cancelledBefore = tether.metrics().healthChecks("cancelled");
            Disposable check = tether.healthLater(slug).subscribe(reply -> { }, error -> { });
            await().atMost(STARTUP_BOUND).until(() -> !MarkedProcesses.marked(RUN).isEmpty());
            List<Long> abandoned = MarkedProcesses.marked(RUN);
            check.dispose();
            await().atMost(GONE_BOUND).until(() -> tether.metrics().healthChecks("cancelled") > cancelledBefore);

            CompletableFuture<TetherClient.Reply> refreshed = tether.exchange(HttpMethod.POST,
                    "/api/connections/org/" + slug + "/default/refresh", null).toFuture();
            boolean inTheWindow = abandoned.stream().allMatch(OsProcesses::alive);
            Files.createFile(gate);
            TetherClient.Reply reply = refreshed.get(GONE_BOUND.toSeconds(), TimeUnit.SECONDS);

            assertThat(inTheWindow).as("round %d: the refresh was sent while the abandoned start's server %s was torn down",
                    round, abandoned).isTrue();
            assertThat(reply.status()).as("round %d: %s", round, reply).isEqualTo(200);
            // The abandoned server ends at the ladder's SIGKILL, the refreshed one once its session idles out.
            MarkedProcesses.awaitNone(RUN, GONE_BOUND);
        }
        assertThat(tether.health(slug).json().get("status").asString()).isEqualTo("healthy");
    }

    /** Every process the server starts, its grandchild included, carries this, so clean-up finds it. */
    private static Map<String, String> marker() {
        return Map.of(MarkedProcesses.VARIABLE, RUN);
    }

    private List<Container> runningContainers() {
        return DockerContainers.withLabel("tether.instance", instance).stream()
                .filter(c -> "running".equals(c.getState()))
                .toList();
    }

    /** What the fixture inside the container recorded, read through its process's root on the host. */
    private static String recordedInContainer(String record) {
        for (ProcessHandle fixture : OsProcesses.matching(record)) {
            // the fixture itself, not the docker run client whose command line also holds the path
            if (OsProcesses.commandLine(fixture.pid()).startsWith("node " + Fixture.IMAGE_FIXTURE_SCRIPT)) {
                return recorded(Path.of("/proc", Long.toString(fixture.pid()), "root").resolve(record.substring(1)));
            }
        }
        return "";
    }

    private static String recorded(Path record) {
        try {
            return Files.exists(record) ? Files.readString(record) : "";
        }
        catch (IOException gone) {
            return ""; // the process (and with it its root) went away while we read
        }
    }
}
