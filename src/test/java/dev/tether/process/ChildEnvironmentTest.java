package dev.tether.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.scheduler.Schedulers;

import dev.tether.testsupport.LifecycleGuard;

/**
 * A real child running {@code env} sees the minimal environment, never the daemon's secrets: the parent
 * environment is handed to {@link ChildProcesses} as the daemon's would be, with a token and a store password in it.
 */
class ChildEnvironmentTest {

    private static final Duration BOUND = Duration.ofSeconds(20);

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    @Test
    void aChildSeesTheMinimalEnvironmentAndNeverTheDaemonsSecrets() {
        Map<String, String> daemon = new LinkedHashMap<>();
        daemon.put("PATH", System.getenv("PATH"));
        daemon.put("HOME", "/home/someone");
        daemon.put("LANG", "C.UTF-8");
        daemon.put("LC_ALL", "C.UTF-8");
        daemon.put("TZ", "UTC");
        daemon.put("DOCKER_HOST", "unix:///run/docker.sock");
        daemon.put("DOCKER_CONFIG", "/home/someone/.docker");
        daemon.put("TETHER_API_TOKEN", "daemon-token-never-in-a-child");
        daemon.put("SPRING_R2DBC_PASSWORD", "store-password-never-in-a-child");
        daemon.put("tether_api_token", "lowercase-too");
        daemon.put("AWS_SECRET_ACCESS_KEY", "not-listed");
        daemon.put("EXTRA_LISTED", "listed-value");
        ProcessProperties properties = new ProcessProperties(Duration.ofMillis(300), Duration.ofMillis(500),
                Duration.ofMillis(500), null, null, List.of("EXTRA_LISTED"), null, null, null);
        ChildProcesses children = new ChildProcesses(properties, ContainerRemover.NONE, guard.tether(),
                new SimpleMeterRegistry(), Schedulers.newSingle("test-teardown", true), daemon);

        ChildSpec spec = new ChildSpec("env" + Long.toHexString(System.nanoTime()), List.of("env"),
                Map.of("FROM_CONFIG", "config-value", "HOME", "/config/home"), Optional.empty(), Optional.empty(),
                Optional.empty());
        Map<String, String> seen = children.using(spec, child -> child.stdout())
                .collect(Collectors.toMap(line -> line.substring(0, line.indexOf('=')), line -> line.substring(line.indexOf('=') + 1)))
                .block(BOUND);

        assertThat(seen).containsEntry("PATH", System.getenv("PATH"))
                .containsEntry("LANG", "C.UTF-8").containsEntry("LC_ALL", "C.UTF-8").containsEntry("TZ", "UTC")
                .containsEntry("DOCKER_HOST", "unix:///run/docker.sock").containsEntry("DOCKER_CONFIG", "/home/someone/.docker")
                .containsEntry("EXTRA_LISTED", "listed-value")
                .containsEntry("FROM_CONFIG", "config-value")
                .as("the config's value wins over the inherited one").containsEntry("HOME", "/config/home");
        assertThat(seen).doesNotContainKeys("TETHER_API_TOKEN", "SPRING_R2DBC_PASSWORD", "tether_api_token", "AWS_SECRET_ACCESS_KEY");
        assertThat(String.join("\n", seen.values())).doesNotContain("never-in-a-child", "lowercase-too", "not-listed");
    }

    @Test
    void tetherAndSpringNamesAreNeverPassedThroughEvenWhenListed() {
        ChildEnvironment environment = new ChildEnvironment(Map.of("TETHER_API_TOKEN", "t", "SPRING_DATASOURCE_PASSWORD", "p",
                "OK_NAME", "ok"), List.of("TETHER_API_TOKEN", "SPRING_DATASOURCE_PASSWORD", "OK_NAME"));
        assertThat(environment.of(ChildSpec.of("x", List.of("true")))).containsExactly(Map.entry("OK_NAME", "ok"));
        assertThatThrownBy(() -> new ProcessProperties(null, null, null, null, null, List.of("TETHER_API_TOKEN"), null, null, null))
                .hasMessageContaining("tether.process.pass-env").hasMessageContaining("TETHER_API_TOKEN");
    }
}
