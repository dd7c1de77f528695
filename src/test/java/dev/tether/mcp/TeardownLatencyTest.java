package dev.tether.mcp;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.Disposable;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.docker.DockerEngine;
import dev.tether.docker.DockerProperties;
import dev.tether.docker.DockerRunRewriter;
import dev.tether.docker.InstanceId;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ProcessProperties;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.LifecycleGuard.Launch;
import dev.tether.testsupport.RequiresDocker;

/**
 * Measures, with the default graces, how long it takes from cancelling a session mid {@code tools/call} until
 * the Docker engine no longer lists its container, for a server that exits on EOF and for one that ignores EOF
 * and SIGTERM. Prints p50/p99; asserts nothing about time (the cancellation matrix asserts the bound).
 * Opt-in: {@code -Dtether.measure=true}, rounds with {@code -Dtether.measure.rounds=N} (default 10).
 */
@RequiresDocker
@EnabledIfSystemProperty(named = "tether.measure", matches = "true")
class TeardownLatencyTest {

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard(Duration.ofSeconds(15));

    @Test
    void cancelToContainerGoneLatency() {
        int rounds = Integer.getInteger("tether.measure.rounds", 10);
        ChildProcesses children = new ChildProcesses(ProcessProperties.defaults(), guard.tether(),
                new DockerEngine(new DockerProperties(null, null, null), JsonMapper.builder().build()),
                new SimpleMeterRegistry());
        McpSessions sessions = new McpSessions(children, new DockerRunRewriter(new InstanceId(guard.tether())),
                McpProperties.defaults());

        for (List<String> flags : List.of(List.<String>of(), List.of("--ignore-eof", "--ignore-sigterm"))) {
            List<Long> millis = new ArrayList<>();
            for (int round = 0; round < rounds; round++) {
                Launch launch = guard.docker(flags.toArray(String[]::new));
                Disposable session = sessions.withSession(StdioServer.of("fixture", launch.argv()),
                                mcp -> mcp.callTool("hang", Map.of()))
                        .subscribe(result -> { }, error -> { });
                launch.awaitRecorded("tools/call", Duration.ofSeconds(30));
                long cancelled = System.nanoTime();
                session.dispose();
                while (!DockerContainers.withLabel(LifecycleGuard.INSTANCE_LABEL, guard.instanceId()).isEmpty()) {
                    Thread.onSpinWait();
                }
                millis.add((System.nanoTime() - cancelled) / 1_000_000);
            }
            Collections.sort(millis);
            System.out.printf("[latency] docker server %s: cancel -> container gone, n=%d, p50 %d ms, p99 %d ms, "
                    + "min %d ms, max %d ms%n", flags.isEmpty() ? "respecting EOF" : String.join(" ", flags),
                    millis.size(), percentile(millis, 50), percentile(millis, 99), millis.get(0),
                    millis.get(millis.size() - 1));
        }
    }

    private static long percentile(List<Long> sorted, int p) {
        int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(index, sorted.size() - 1)));
    }
}
