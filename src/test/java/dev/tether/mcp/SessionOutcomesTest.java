package dev.tether.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.test.StepVerifier;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.docker.DockerEngine;
import dev.tether.docker.DockerProperties;
import dev.tether.docker.DockerRunRewriter;
import dev.tether.docker.InstanceId;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ChildSpawnException;
import dev.tether.process.ContainerRemover;
import dev.tether.process.ProcessProperties;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.LifecycleGuard.Launch;
import dev.tether.testsupport.OsProcesses;
import dev.tether.testsupport.RequiresDocker;

/**
 * Every way a session ends other than cancellation (it completes, the server crashes, exits at start, breaks
 * the protocol, cannot be started, or floods stderr) leaves nothing behind, and a failure says which server
 * failed and how, quoting its stderr. Plain children, and Docker where the container adds a way to leak.
 */
class SessionOutcomesTest {

    private static final ProcessProperties SHORT_GRACES = new ProcessProperties(Duration.ofMillis(300),
            Duration.ofMillis(500), Duration.ofMillis(500), null, null);
    private static final Duration BOUND = Duration.ofSeconds(30);
    /** The ladder's own bound plus slack for the engine. */
    private static final Duration GONE = Duration.ofMillis(1300 + 4000);
    private static final int STDERR_TAIL = (int) SHORT_GRACES.stderrTail().toBytes();

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    private final MeterRegistry meters = new SimpleMeterRegistry();
    private ChildProcesses children;

    @Test
    void sessionThatCompletesTearsItsChildDown() {
        Launch launch = guard.plain();

        StepVerifier.create(sessions(ContainerRemover.NONE).withSession(server("fixture", launch),
                        session -> session.callTool("echo", Map.of("text", "hello"))))
                .assertNext(result -> assertEquals("hello", text(result.result())))
                .expectComplete()
                .verify(BOUND);

        assertNothingLeft(launch);
        Await.until(() -> meters.find("tether.children.teardown").tag("rung", "eof").counter() != null, BOUND,
                () -> "a teardown at rung eof");
    }

    @Test
    @RequiresDocker
    void sessionThatCompletesRemovesItsContainerThoughRmRacesForIt() {
        Launch launch = guard.docker();

        StepVerifier.create(sessions(engine()).withSession(server("fixture", launch),
                        session -> session.callTool("echo", Map.of("text", "from a container"))))
                .assertNext(result -> assertEquals("from a container", text(result.result())))
                .expectComplete()
                .verify(BOUND);

        assertNothingLeft(launch);
    }

    @Test
    void serverCrashingMidCallFailsTheCallNamingServerAndExitCode() {
        Launch launch = guard.plain();

        StepVerifier.create(sessions(ContainerRemover.NONE).withSession(server("crashy", launch),
                        session -> session.callTool("crash", Map.of())))
                .expectErrorSatisfies(error -> {
                    McpServerException failure = assertInstanceOf(McpServerException.class, error);
                    assertEquals("crashy", failure.server());
                    assertEquals(Optional.of(3), failure.exitCode());
                    assertTrue(failure.getMessage().startsWith("MCP server 'crashy' exited with code 3: "),
                            failure.getMessage());
                    assertTrue(failure.getMessage().contains("fixture: crashing mid-call"), failure.getMessage());
                })
                .verify(BOUND);

        assertNothingLeft(launch);
    }

    @Test
    @RequiresDocker
    void serverCrashingMidCallInAContainerFailsWithItsExitCodeAndLeavesNoContainer() {
        Launch launch = guard.docker();

        StepVerifier.create(sessions(engine()).withSession(server("crashy", launch),
                        session -> session.callTool("crash", Map.of())))
                .expectErrorSatisfies(error -> {
                    McpServerException failure = assertInstanceOf(McpServerException.class, error);
                    assertEquals(Optional.of(3), failure.exitCode(), "docker run passes the exit code on");
                    assertTrue(failure.getMessage().contains("fixture: crashing mid-call"), failure.getMessage());
                })
                .verify(BOUND);

        assertNothingLeft(launch);
    }

    @Test
    void serverExitingAtStartFailsWithItsExitCodeAndStderr() {
        Launch launch = guard.plain("--exit-at-start=7");

        StepVerifier.create(sessions(ContainerRemover.NONE).withSession(server("quitter", launch), McpSession::ping))
                .expectErrorSatisfies(error -> {
                    McpServerException failure = assertInstanceOf(McpServerException.class, error);
                    assertEquals("quitter", failure.server());
                    assertEquals(Optional.of(7), failure.exitCode());
                    assertEquals("MCP server 'quitter' exited with code 7: fixture: failing at start on purpose",
                            failure.getMessage());
                })
                .verify(BOUND);

        assertNothingLeft(launch);
    }

    /**
     * A shell that is gone before the handshake is written: the write to its stdin fails (broken pipe) before the
     * exit is observed. That race once made most runs report the SDK's bare "Client failed to initialize".
     */
    @Test
    void serverExitingAtOnceIsAlwaysReportedWithItsExitCodeAndStderr() {
        McpSessions sessions = sessions(ContainerRemover.NONE);
        StdioServer server = StdioServer.of("bye", List.of("sh", "-c", "echo bye >&2; exit 3"));
        for (int run = 0; run < 20; run++) {
            String what = "run " + run;
            StepVerifier.create(sessions.withSession(server, McpSession::ping))
                    .expectErrorSatisfies(error -> {
                        McpServerException failure = assertInstanceOf(McpServerException.class, error, what + ": " + error);
                        assertEquals(Optional.of(3), failure.exitCode(), what + ": " + failure.getMessage());
                        assertEquals("MCP server 'bye' exited with code 3: bye", failure.getMessage().strip(), what);
                    })
                    .verify(BOUND);
        }
        Await.until(() -> children.live().isEmpty(), BOUND, () -> "every child torn down");
    }

    /** A child that prints what Tether put in its environment does not get those values into an error. */
    @Test
    void stderrQuotedInAnErrorNeverRepeatsAValueTetherGaveTheChild() {
        McpSessions sessions = sessions(ContainerRemover.NONE);
        StdioServer server = new StdioServer("leaky", "sh", List.of("-c", "echo \"token=$API_TOKEN and $API_TOKEN\" >&2; exit 4"),
                Map.of("API_TOKEN", "s3cr3t-value-42"), Optional.empty());
        StepVerifier.create(sessions.withSession(server, McpSession::ping))
                .expectErrorSatisfies(error -> {
                    assertTrue(!error.getMessage().contains("s3cr3t-value-42"), error.getMessage());
                    assertEquals("MCP server 'leaky' exited with code 4: token=*** and ***", error.getMessage().strip());
                })
                .verify(BOUND);
        Await.until(() -> children.live().isEmpty(), BOUND, () -> "every child torn down");
    }

    @Test
    void serverWritingSomethingOtherThanJsonFailsClearlyAndIsTornDown() {
        Launch launch = guard.plain("--non-json", "--ignore-eof");

        StepVerifier.create(sessions(ContainerRemover.NONE).withSession(server("chatty", launch), McpSession::ping))
                .expectErrorSatisfies(error -> {
                    McpServerException failure = assertInstanceOf(McpServerException.class, error);
                    assertEquals("MCP server 'chatty' wrote something other than JSON-RPC on stdout: this is not json",
                            failure.getMessage());
                })
                .verify(BOUND);

        assertNothingLeft(launch);
    }

    @Test
    void commandThatDoesNotExistFailsWithChildSpawnException() {
        StdioServer missing = StdioServer.of("missing", List.of("/nonexistent/tether-no-such-server", "stdio"));

        StepVerifier.create(sessions(ContainerRemover.NONE).withSession(missing, McpSession::ping))
                .expectErrorSatisfies(error -> {
                    ChildSpawnException spawn = assertInstanceOf(ChildSpawnException.class, error);
                    assertTrue(spawn.getMessage().startsWith("cannot start `/nonexistent/tether-no-such-server`"),
                            spawn.getMessage());
                })
                .verify(BOUND);
        assertEquals(List.of(), List.copyOf(children.live()));
    }

    @Test
    void stderrFloodDoesNotBlockTheHandshakeAndErrorsQuoteOnlyItsTail() {
        Launch launch = guard.plain("--stderr-noise=2048");

        StepVerifier.create(sessions(ContainerRemover.NONE).withSession(server("noisy", launch),
                        session -> session.ping().then(session.callTool("crash", Map.of()))))
                .expectErrorSatisfies(error -> {
                    // Node drops what it has not flushed to a backed-up pipe when it exits, so its last line may
                    // never reach us; only the bound on what is quoted is Tether's to keep.
                    String message = error.getMessage();
                    assertTrue(message.startsWith("MCP server 'noisy' exited with code 3: …"), message.substring(0, 80));
                    assertTrue(message.length() <= STDERR_TAIL + 100, "a message of " + message.length() + " chars");
                })
                .verify(BOUND);

        assertNothingLeft(launch);
    }

    @Test
    void serverThatNeverAnswersTheHandshakeTimesOutAndIsTornDown() {
        Launch launch = guard.plain("--hang-on-initialize", "--ignore-eof", "--ignore-sigterm");
        McpProperties impatient = new McpProperties(Duration.ofMillis(1500), null, null, null, null);

        StepVerifier.create(sessions(ContainerRemover.NONE, impatient).withSession(server("mute", launch),
                        McpSession::ping))
                .expectErrorSatisfies(error -> {
                    McpTimeoutException timeout = assertInstanceOf(McpTimeoutException.class, error);
                    assertEquals("MCP initialize timed out after 1500ms", timeout.getMessage());
                    assertEquals("mute", timeout.server());
                })
                .verify(BOUND);

        assertNothingLeft(launch);
    }

    private McpSessions sessions(ContainerRemover containers) {
        return sessions(containers, McpProperties.defaults());
    }

    private McpSessions sessions(ContainerRemover containers, McpProperties properties) {
        children = new ChildProcesses(SHORT_GRACES, guard.tether(), containers, meters);
        return new McpSessions(children, new DockerRunRewriter(new InstanceId(guard.tether())), properties);
    }

    private static DockerEngine engine() {
        return new DockerEngine(new DockerProperties(null, null, null), JsonMapper.builder().build());
    }

    private static StdioServer server(String name, Launch launch) {
        return StdioServer.of(name, launch.argv());
    }

    private static String text(CallToolResult result) {
        return ((TextContent) result.content().get(0)).text();
    }

    /** Asks the OS and the engine, within the ladder's bound, and then checks Tether forgot the child too. */
    private void assertNothingLeft(Launch launch) {
        long start = System.nanoTime();
        OsProcesses.awaitGone(launch.hostPids(), GONE);
        OsProcesses.awaitNoneMatching(guard.marker(), Await.remaining(start, GONE));
        if (launch.inDocker()) {
            DockerContainers.awaitNoneWithLabel(LifecycleGuard.INSTANCE_LABEL, guard.instanceId(),
                    Await.remaining(start, GONE));
        }
        Await.until(() -> children.live().isEmpty(), GONE, () -> "no live child: " + children.live());
    }
}
