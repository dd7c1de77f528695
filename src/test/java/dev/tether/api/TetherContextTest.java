package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.util.unit.DataSize;

import dev.tether.TetherApplication;
import dev.tether.daemon.TetherProperties;
import dev.tether.catalog.CatalogProperties;
import dev.tether.docker.DockerProperties;
import dev.tether.execution.ExecutionProperties;
import dev.tether.health.HealthProperties;
import dev.tether.health.HealthService;
import dev.tether.mcp.McpProperties;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ProcessProperties;
import dev.tether.session.SessionPool;
import dev.tether.session.SessionProperties;
import dev.tether.security.AuthToken;

/**
 * The application context starts with no configuration file and nothing but a data dir: every setting takes
 * its documented default, the data dir gets its instance id and owner-only token, and an invalid setting stops
 * the start naming itself. {@code application.yaml} is not read here on purpose: the defaults live in code.
 */
@InProcess
class TetherContextTest {

    @TempDir
    Path dataDir;

    private ReactiveWebApplicationContextRunner runner() {
        return new ReactiveWebApplicationContextRunner()
                .withUserConfiguration(TetherApplication.class)
                .withPropertyValues("tether.data-dir=" + dataDir);
    }

    @Test
    void startsWithEmbeddedDefaultsAndATempDataDir() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(HealthService.class).hasSingleBean(SessionPool.class)
                    .hasSingleBean(ChildProcesses.class).hasSingleBean(AuthToken.class);

            assertThat(context.getBean(TetherProperties.class).dataDir()).isEqualTo(dataDir);
            ProcessProperties process = context.getBean(ProcessProperties.class);
            assertThat(process.eofGrace()).isEqualTo(Duration.ofSeconds(1));
            assertThat(process.termGrace()).isEqualTo(Duration.ofSeconds(2));
            assertThat(process.killGrace()).isEqualTo(Duration.ofSeconds(2));
            assertThat(process.stderrTail()).isEqualTo(DataSize.ofKilobytes(8));
            assertThat(process.shutdownTimeout()).isEqualTo(Duration.ofSeconds(15));
            McpProperties mcp = context.getBean(McpProperties.class);
            assertThat(mcp.discoveryTimeout()).isEqualTo(Duration.ofSeconds(15));
            assertThat(mcp.pingTimeout()).isEqualTo(Duration.ofSeconds(10));
            assertThat(mcp.callTimeout()).isEqualTo(Duration.ofSeconds(60));
            assertThat(mcp.maxToolPages()).isEqualTo(100);
            SessionProperties session = context.getBean(SessionProperties.class);
            assertThat(session.idleTtl()).isEqualTo(Duration.ofMinutes(5));
            assertThat(session.maxSessions()).isEqualTo(64);
            assertThat(session.maxLeasesPerSession()).isEqualTo(16);
            HealthProperties health = context.getBean(HealthProperties.class);
            assertThat(health.timeout()).isEqualTo(Duration.ofSeconds(20));
            assertThat(health.concurrency()).isEqualTo(8);
            assertThat(health.linger()).isEqualTo(Duration.ofMillis(250));
            CatalogProperties catalog = context.getBean(CatalogProperties.class);
            assertThat(catalog.ttl()).isEqualTo(Duration.ofMinutes(15));
            assertThat(catalog.syncConcurrency()).isEqualTo(4);
            assertThat(catalog.grace()).isEqualTo(Duration.ofSeconds(2));
            DockerProperties docker = context.getBean(DockerProperties.class);
            assertThat(docker.reapInterval()).isEqualTo(Duration.ofSeconds(60));
            assertThat(docker.requestTimeout()).isEqualTo(Duration.ofSeconds(10));
            ExecutionProperties execution = context.getBean(ExecutionProperties.class);
            assertThat(execution.timeout()).isEqualTo(Duration.ofMinutes(5));
            assertThat(execution.maxOutput()).isEqualTo(DataSize.ofMegabytes(1));
            assertThat(execution.maxStringLength()).isEqualTo(16 * 1024 * 1024);
            assertThat(execution.maxPaused()).isEqualTo(64);
            assertThat(execution.pausedExpiry()).isEqualTo(Duration.ofMinutes(15));

            assertThat(DataDirs.instanceId(dataDir)).matches("[0-9a-f]{8}");
            Path auth = DataDirs.authFile(dataDir);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(auth))).isEqualTo("rw-------");
            assertThat(context.getBean(AuthToken.class).matches(DataDirs.token(dataDir))).isTrue();
        });
    }

    @Test
    void aRestartKeepsTheTokenAndTheInstanceId() {
        String[] first = new String[2];
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            first[0] = DataDirs.token(dataDir);
            first[1] = DataDirs.instanceId(dataDir);
        });
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(DataDirs.token(dataDir)).isEqualTo(first[0]);
            assertThat(DataDirs.instanceId(dataDir)).as("so the restarted daemon finds its containers").isEqualTo(first[1]);
            assertThat(context.getBean(AuthToken.class).matches(first[0])).isTrue();
        });
    }

    @Test
    void aFixedTokenIsUsedAsGivenAndNoTokenFileIsWritten() throws IOException {
        runner().withPropertyValues("tether.api.token=fixed-token-for-tests").run(context -> {
            assertThat(context).hasNotFailed();
            AuthToken token = context.getBean(AuthToken.class);
            assertThat(token.matches("fixed-token-for-tests")).isTrue();
            assertThat(token.matches("fixed-token-for-test")).isFalse();
            assertThat(token.matches(null)).isFalse();
        });
        assertThat(DataDirs.authFile(dataDir)).doesNotExist();
    }

    @ParameterizedTest
    @ValueSource(strings = { "tether.process.eof-grace=0s", "tether.mcp.ping-timeout=0ms", "tether.session.max-sessions=0",
            "tether.health.timeout=-5s", "tether.catalog.sync-concurrency=0", "tether.docker.reap-interval=0s",
            "tether.mcp.close-timeout=0s", "tether.catalog.grace=-1s", "tether.health.linger=-1ms",
            "tether.execution.timeout=0s", "tether.execution.max-paused=0", "tether.execution.paused-expiry=-1s",
            "tether.execution.max-output=0B", "tether.execution.max-string-length=0",
            "tether.oauth.public-base-url=http://tether.example.test", "tether.oauth.public-base-url=https://tether.example.test/?x=1" })
    void anInvalidSettingStopsTheStartNamingIt(String setting) {
        runner().withPropertyValues(setting).run(context -> {
            assertThat(context).hasFailed();
            String name = setting.substring(0, setting.indexOf('='));
            assertThat(messages(context.getStartupFailure())).contains(name);
        });
    }

    @Test
    void aPublicBaseUrlWithCredentialsInItStopsTheStartWithoutEchoingThem() {
        runner().withPropertyValues("tether.oauth.public-base-url=https://user:s3cret@tether.example.test").run(context -> {
            assertThat(context).hasFailed();
            assertThat(messages(context.getStartupFailure())).contains("tether.oauth.public-base-url must be an https: URL")
                    .contains("https://tether.example.test").doesNotContain("s3cret");
        });
    }

    private static String messages(Throwable failure) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
        }
        return all.toString();
    }
}
