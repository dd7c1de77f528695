package dev.tether.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import dev.tether.docker.DockerRunRewriter;
import dev.tether.docker.InstanceId;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ContainerRemover;
import dev.tether.process.ProcessProperties;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.LifecycleGuard.Launch;

/**
 * A call whose context holds a {@link ProgressListener} asks its server for progress and hears its own progress
 * only, though the SDK hears the progress of a whole session in one place; a call without one asks for none.
 */
class CallProgressTest {

    private static final Duration BOUND = Duration.ofSeconds(30);

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    @Test
    void twoCallsOnOneSessionEachHearTheirOwnProgress() throws Exception {
        Launch launch = guard.plain("--progress-tool");
        List<ProgressNotification> first = new CopyOnWriteArrayList<>();
        List<ProgressNotification> second = new CopyOnWriteArrayList<>();

        StepVerifier.create(sessions().withSession(StdioServer.of("fixture", launch.argv()), session -> Mono.zip(
                        session.callTool("progress", Map.of("steps", 3, "ms", 60)).contextWrite(ProgressListener.of(first::add)),
                        session.callTool("progress", Map.of("steps", 2, "ms", 90)).contextWrite(ProgressListener.of(second::add)),
                        session.callTool("echo", Map.of("text", "no progress wanted")))))
                .assertNext(results -> {
                    assertThat(text(results.getT1().result())).isEqualTo("done after 3 steps");
                    assertThat(text(results.getT2().result())).isEqualTo("done after 2 steps");
                    assertThat(text(results.getT3().result())).isEqualTo("no progress wanted");
                })
                .expectComplete()
                .verify(BOUND);

        assertThat(first).extracting(ProgressNotification::progress).containsExactly(1.0, 2.0, 3.0);
        assertThat(first).extracting(ProgressNotification::total).containsOnly(3.0);
        assertThat(second).extracting(ProgressNotification::progress).containsExactly(1.0, 2.0);
        assertThat(second).extracting(ProgressNotification::total).containsOnly(2.0);
        assertThat(Files.readAllLines(launch.record())).as("only the two calls that wanted progress asked for it")
                .filteredOn("progress asked"::equals).hasSize(2);
    }

    private McpSessions sessions() {
        ChildProcesses children = new ChildProcesses(ProcessProperties.defaults(), guard.tether(), ContainerRemover.NONE,
                new SimpleMeterRegistry());
        return new McpSessions(children, new DockerRunRewriter(new InstanceId(guard.tether())), McpProperties.defaults());
    }

    private static String text(CallToolResult result) {
        return ((TextContent) result.content().get(0)).text();
    }
}
