package dev.tether.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.TetherApplication;
import dev.tether.testsupport.ExecutorCli;
import dev.tether.testsupport.RequiresExecutorCli;

/**
 * The record Executor's CLI finds a local server by, written by a running Tether and removed when it stops, checked
 * on disk and with the real CLI, whose {@code HOME} holds the record.
 */
class ExecutorDiscoveryTest {

    private static final String TOKEN = "discovery-test-token";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path home;

    @TempDir
    Path dataDir;

    private Process otherServer;

    @AfterEach
    void stopOtherServer() throws InterruptedException {
        if (otherServer != null) {
            otherServer.destroyForcibly().waitFor();
        }
    }

    private Path executorDir() {
        return home.resolve(".executor");
    }

    private Path manifest() {
        return executorDir().resolve("server-control").resolve("server.json");
    }

    private ConfigurableApplicationContext start(String... extra) {
        // as arguments, which win over application.yaml (default properties would not, and its port is 4788)
        List<String> arguments = new ArrayList<>(List.of("--server.port=0", "--tether.data-dir=" + dataDir,
                "--tether.api.token=" + TOKEN, "--tether.discovery.executor-data-dir=" + executorDir(),
                "--tether.docker.reap-interval=1h"));
        Stream.of(extra).map(setting -> "--" + setting).forEach(arguments::add);
        return new SpringApplicationBuilder(TetherApplication.class).run(arguments.toArray(String[]::new));
    }

    private static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    @Test
    void writesExecutorsRecordOnStartAndRemovesItOnStop() throws IOException {
        try (ConfigurableApplicationContext context = start()) {
            JsonNode record = JSON.readTree(Files.readString(manifest()));
            String origin = "http://127.0.0.1:" + port(context);
            assertThat(record.path("version").asInt()).isEqualTo(1);
            assertThat(record.path("kind").asString()).isEqualTo("foreground");
            assertThat(record.path("pid").asLong()).isEqualTo(ProcessHandle.current().pid());
            assertThat(record.path("dataDir").asString()).isEqualTo(executorDir().toString());
            assertThat(record.path("scopeDir").isNull()).isTrue();
            assertThat(record.path("startedAt").asString()).isNotBlank();
            JsonNode connection = record.path("connection");
            assertThat(connection.path("kind").asString()).isEqualTo("http");
            assertThat(connection.path("key").asString()).isEqualTo("http:" + origin);
            assertThat(connection.path("origin").asString()).isEqualTo(origin);
            assertThat(connection.path("apiBaseUrl").asString()).isEqualTo(origin + "/api");
            assertThat(connection.path("auth").path("kind").asString()).isEqualTo("bearer");
            assertThat(connection.path("auth").path("token").asString()).isEqualTo(TOKEN);
            assertThat(record.path("owner").path("client").asString()).isEqualTo("cli");
            assertThat(Files.getPosixFilePermissions(manifest())).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        }
        assertThat(manifest()).doesNotExist();
    }

    @Test
    void theOriginHostIsASetting() throws IOException {
        try (ConfigurableApplicationContext context = start("tether.discovery.host=localhost")) {
            assertThat(JSON.readTree(Files.readString(manifest())).path("connection").path("origin").asString())
                    .isEqualTo("http://localhost:" + port(context));
        }
    }

    @Test
    void writesNothingWhenDisabled() {
        try (ConfigurableApplicationContext context = start("tether.discovery.enabled=false")) {
            assertThat(manifest()).doesNotExist();
        }
    }

    @Test
    void neverOverwritesNorRemovesTheRecordOfAnotherLiveServer() throws IOException {
        otherServer = new ProcessBuilder("sleep", "600").start();
        String others = recordOf(otherServer.pid(), "http://127.0.0.1:1");
        Files.createDirectories(manifest().getParent());
        Files.writeString(manifest(), others);

        try (ConfigurableApplicationContext context = start()) {
            assertThat(manifest()).hasContent(others);
        }
        assertThat(manifest()).hasContent(others);
    }

    @Test
    void replacesTheRecordOfADeadServer() throws IOException, InterruptedException {
        Process dead = new ProcessBuilder("true").start();
        dead.waitFor();
        Files.createDirectories(manifest().getParent());
        Files.writeString(manifest(), recordOf(dead.pid(), "http://127.0.0.1:1"));

        try (ConfigurableApplicationContext context = start()) {
            assertThat(JSON.readTree(Files.readString(manifest())).path("pid").asLong()).isEqualTo(ProcessHandle.current().pid());
        }
        assertThat(manifest()).doesNotExist();
    }

    @Test
    void leavesARecordThatAnotherServerWroteWhileTetherRan() throws IOException {
        otherServer = new ProcessBuilder("sleep", "600").start();
        String others = recordOf(otherServer.pid(), "http://127.0.0.1:1");
        try (ConfigurableApplicationContext context = start()) {
            Files.writeString(manifest(), others);
        }
        assertThat(manifest()).hasContent(others);
    }

    /**
     * The real CLI, with no token and no server of its own: aimed at Tether's loopback origin, or at no origin at all,
     * it reaches Tether with the record's token and starts no {@code executor daemon}. Without the record the same
     * command starts one, which shows that the check can fail.
     */
    @Test
    @RequiresExecutorCli
    void theRealCliUsesTetherAndStartsNoDaemon() {
        ExecutorCli cli = new ExecutorCli(home);
        try (ConfigurableApplicationContext context = start()) {
            String origin = "http://127.0.0.1:" + port(context);
            ExecutorCli.Result aimed = cli.run("call", "--help", "--base-url", origin);
            assertThat(aimed.exitCode()).as(aimed.output()).isZero();
            assertThat(aimed.stdout()).contains("Usage:").doesNotContain("Starting daemon");
            ExecutorCli.Result implicit = cli.run("call", "--help");
            assertThat(implicit.exitCode()).as(implicit.output()).isZero();
            assertThat(cli.daemonsStarted()).isEmpty();
        }
    }

    @Test
    @RequiresExecutorCli
    void withoutTheRecordTheCliStartsADaemonOfItsOwn() {
        ExecutorCli cli = new ExecutorCli(home).with("EXECUTOR_AUTH_TOKEN", TOKEN);
        try (ConfigurableApplicationContext context = start("tether.discovery.enabled=false")) {
            ExecutorCli.Result result = cli.run("call", "--help", "--base-url", "http://127.0.0.1:" + port(context));
            assertThat(result.output()).contains("Starting daemon");
            assertThat(cli.daemonsStarted()).isNotEmpty();
        }
        finally {
            cli.stopDaemonsStarted(Duration.ofSeconds(20));
        }
    }

    /** Node's {@code os.homedir()}, which Executor's CLI uses: {@code HOME} when set and not empty, else the account's. */
    @Test
    void theRecordGoesUnderHomeAsExecutorsCliLooksForIt() {
        assertThat(DiscoveryProperties.defaultDataDir(null, "/home/elsewhere")).isEqualTo(Path.of("/home/elsewhere/.executor"));
        assertThat(DiscoveryProperties.defaultDataDir("", "/home/elsewhere")).isEqualTo(Path.of("/home/elsewhere/.executor"));
        assertThat(DiscoveryProperties.defaultDataDir(null, "")).isEqualTo(Path.of(System.getProperty("user.home"), ".executor"));
        assertThat(DiscoveryProperties.defaultDataDir("/data/executor", "/home/elsewhere")).isEqualTo(Path.of("/data/executor"));
    }

    private static String recordOf(long pid, String origin) {
        return """
                {
                  "version": 1,
                  "kind": "cli-daemon",
                  "pid": %d,
                  "startedAt": "2026-01-01T00:00:00.000Z",
                  "dataDir": "/elsewhere",
                  "scopeDir": null,
                  "connection": { "kind": "http", "origin": "%s" },
                  "owner": { "client": "cli", "version": "1.5.9", "executablePath": null }
                }
                """.formatted(pid, origin);
    }
}
