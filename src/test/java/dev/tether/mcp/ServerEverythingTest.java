package dev.tether.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.modelcontextprotocol.spec.McpSchema.ElicitRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.docker.DockerEngine;
import dev.tether.docker.DockerProperties;
import dev.tether.docker.DockerRunRewriter;
import dev.tether.docker.InstanceId;
import dev.tether.process.ChildProcess;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ContainerRemover;
import dev.tether.process.ProcessProperties;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.OsProcesses;
import dev.tether.testsupport.RequiresDocker;

/**
 * The reference server {@code @modelcontextprotocol/server-everything}, not our fixture: handshake, its full
 * tool list, a call to its echo tool, the progress of its long-running operation, as a plain child and inside {@code docker run -i --rm}; afterwards the OS
 * and the engine know of nothing it started.
 */
class ServerEverythingTest {

    private static final Duration BOUND = Duration.ofSeconds(60);
    /** The default ladder (1 s + 2 s + 2 s) and slack. */
    private static final Duration GONE = Duration.ofSeconds(10);

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    private final Set<Long> pids = ConcurrentHashMap.newKeySet();

    @Test
    void handshakeToolListAndEchoAsAPlainChild() {
        ChildProcesses children = children(ContainerRemover.NONE);

        exercise(children, Fixture.everythingCommand());

        OsProcesses.awaitGone(pids, GONE);
        Await.until(() -> children.live().isEmpty(), GONE, () -> "no live child: " + children.live());
    }

    @Test
    @RequiresDocker
    void handshakeToolListAndEchoInsideDocker() {
        ChildProcesses children = children(new DockerEngine(new DockerProperties(null, null, null),
                JsonMapper.builder().build()));

        exercise(children, Fixture.everythingDockerCommand(guard.dockerRunOptions()));

        OsProcesses.awaitGone(pids, GONE);
        DockerContainers.awaitNoneWithLabel(LifecycleGuard.INSTANCE_LABEL, guard.instanceId(), GONE);
        DockerContainers.awaitNoneWithLabel(LifecycleGuard.RUN_LABEL, guard.marker(), GONE);
    }

    private void exercise(ChildProcesses children, List<String> argv) {
        List<ProgressNotification> progress = new CopyOnWriteArrayList<>();
        List<ElicitRequest> questions = new CopyOnWriteArrayList<>();
        McpSessions sessions = new McpSessions(children, new DockerRunRewriter(new InstanceId(guard.tether())),
                McpProperties.defaults());

        StepVerifier.create(sessions.withSession(StdioServer.of("everything", argv), session -> {
                    // Only to know which host processes to ask the OS about afterwards.
                    children.live().forEach(this::remember);
                    return Mono.zip(session.listTools(), session.callTool("echo", Map.of("message", "hello tether")),
                            session.callTool("trigger-long-running-operation", Map.of("duration", 0.6, "steps", 3))
                                    .contextWrite(ProgressListener.of(progress::add)),
                            session.callTool("trigger-elicitation-request", Map.of())
                                    .contextWrite(ElicitationHandler.of(request -> {
                                        questions.add(request);
                                        return Mono.just(new ElicitResult(ElicitResult.Action.ACCEPT, Map.of("name", "Ada")));
                                    })));
                }))
                .assertNext(both -> {
                    ToolCatalog catalog = both.getT1();
                    Set<String> names = catalog.tools().stream().map(Tool::name).collect(Collectors.toSet());
                    assertTrue(catalog.complete(), () -> "incomplete: " + catalog.incompleteReason());
                    assertTrue(names.containsAll(Set.of("echo", "get-sum", "get-tiny-image",
                            "trigger-long-running-operation")), names.toString());
                    assertEquals("Echo: hello tether", ((TextContent) both.getT2().result().content().get(0)).text());
                    assertTrue(((TextContent) both.getT3().result().content().get(0)).text().contains("Steps: 3"), both.getT3().toString());
                    // Tether's client declares elicitation (form and URL), so the tools that ask are listed too: 15, as to Executor.
                    assertTrue(names.containsAll(Set.of("trigger-elicitation-request", "trigger-url-elicitation")), names.toString());
                    assertEquals(15, names.size(), names.toString());
                    assertTrue(((TextContent) both.getT4().result().content().get(1)).text().contains("- Name: Ada"), both.getT4().toString());
                })
                .expectComplete()
                .verify(BOUND);
        assertFalse(pids.isEmpty(), "the session ran on a child");
        assertEquals("Please provide inputs for the following fields:", questions.get(0).message(),
                "the server's question reached the call's handler");
        assertEquals(List.of(1.0, 2.0, 3.0), progress.stream().map(ProgressNotification::progress).toList(),
                "the long-running operation's progress, step by step");
    }

    private void remember(ChildProcess child) {
        pids.add(child.pid());
        ProcessHandle.of(child.pid()).ifPresent(handle -> handle.descendants().forEach(d -> pids.add(d.pid())));
        pids.forEach(guard::watch);
    }

    private ChildProcesses children(ContainerRemover containers) {
        ProcessProperties defaults = ProcessProperties.defaults();
        return new ChildProcesses(defaults, guard.tether(), containers, new SimpleMeterRegistry());
    }
}
