package dev.tether.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;

/**
 * {@code bin/executor-sidecar} started as the Executor desktop app starts it ({@code apps/desktop/src/main/sidecar.ts}):
 * no arguments, the {@code EXECUTOR_*} environment, the ready line read from stdout, the failures read from stderr,
 * stopped with SIGTERM.
 */
class ExecutorSidecarIT {

    private static final Pattern READY = Pattern.compile("EXECUTOR_READY:(\\d+)");
    /** Generous: the first start after a build trains the launcher's start-up cache. */
    private static final Duration START_BOUND = Duration.ofMinutes(10);
    private static final String PASSWORD = "sidecar-password";

    @TempDir
    Path dir;

    private Process sidecar;
    private Process other;

    @AfterEach
    void stop() throws InterruptedException {
        for (Process process : new Process[] { sidecar, other }) {
            if (process != null && process.isAlive()) {
                process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void announcesItsPortOnceTheApiAnswersServesTheUiWithTheAppsPasswordAndStopsCleanlyOnSigterm() throws Exception {
        Path ui = Files.createDirectories(dir.resolve("web-ui"));
        Files.writeString(ui.resolve("index.html"), "<!doctype html><title>Executor</title>");
        int port = Fixture.freeLoopbackPort();
        Path data = dir.resolve("executor-data");
        sidecar = launch(port, Map.of("EXECUTOR_AUTH_PASSWORD", PASSWORD, "EXECUTOR_CLIENT_DIR", ui.toString(),
                "EXECUTOR_DATA_DIR", data.toString(), "EXECUTOR_SCOPE_DIR", dir.resolve("scope").toString()));

        CompletableFuture<Integer> ready = readyPort(sidecar);
        assertThat(ready.get(START_BOUND.toSeconds(), TimeUnit.SECONDS)).isEqualTo(port);

        HttpClient http = HttpClient.newHttpClient();
        String basic = "Basic " + Base64.getEncoder().encodeToString(("executor:" + PASSWORD).getBytes(StandardCharsets.UTF_8));
        HttpResponse<String> index = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/"))
                .header("Authorization", basic).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(index.statusCode()).isEqualTo(200);
        assertThat(index.body()).contains("<title>Executor</title>");
        assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/integrations")).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(401);

        Path record = data.resolve("server-control/server.json");
        var written = JsonMapper.builder().build().readTree(Files.readString(record));
        assertThat(written.path("pid").asLong()).as("the app's child is the server itself").isEqualTo(sidecar.pid());
        assertThat(written.path("scopeDir").asString()).isEqualTo(dir.resolve("scope").toString());
        assertThat(data.resolve("server-control/startup.lock")).as("released once the record is written").doesNotExist();
        assertThat(data.resolve("tether")).as("Tether's own data, apart from Executor's").isDirectory();

        sidecar.destroy(); // SIGTERM, as stopSidecar sends it; the app kills after 5 s
        assertThat(sidecar.waitFor(15, TimeUnit.SECONDS)).isTrue();
        assertThat(sidecar.exitValue()).isIn(0, 143);
        assertThat(record).doesNotExist();
    }

    @Test
    void aPortInUseIsOneStderrLineWithTheWordsTheAppLooksFor() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            sidecar = launch(taken.getLocalPort(), Map.of("EXECUTOR_DATA_DIR", dir.resolve("data").toString(),
                    "EXECUTOR_AUTH_PASSWORD", PASSWORD));
            readyPort(sidecar); // drains stdout
            assertThat(sidecar.waitFor(START_BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        }
        assertThat(sidecar.exitValue()).isNotZero();
        String stderr = Files.readString(dir.resolve("stderr.log"));
        assertThat(stderr).containsPattern("(?i)EADDRINUSE|address already in use"); // sidecar.ts's test
        assertThat(stderr).contains("tether: port ").doesNotContain("\tat ");
    }

    /** The app's EXECUTOR_CLIENT_DIR missing, or not a UI: one line naming it, on either stream no stack trace. */
    @Test
    void aMissingOrUnusableClientDirIsOneLineNamingItAndNoStackTrace() throws Exception {
        Path notAUi = Files.createDirectories(dir.resolve("empty-ui"));
        for (Path ui : List.of(dir.resolve("no-such-ui"), notAUi)) {
            sidecar = launch(Fixture.freeLoopbackPort(), Map.of("EXECUTOR_DATA_DIR", dir.resolve("data").toString(),
                    "EXECUTOR_AUTH_PASSWORD", PASSWORD, "EXECUTOR_CLIENT_DIR", ui.toString()));
            CompletableFuture<String> stdout = CompletableFuture.supplyAsync(() -> {
                try {
                    return new String(sidecar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                }
                catch (IOException ex) {
                    throw new java.io.UncheckedIOException(ex);
                }
            });
            assertThat(sidecar.waitFor(START_BOUND.toSeconds(), TimeUnit.SECONDS)).as(ui + ": the start ends").isTrue();
            assertThat(sidecar.exitValue()).as(ui.toString()).isNotZero();
            String out = stdout.get(10, TimeUnit.SECONDS);
            String stderr = Files.readString(dir.resolve("stderr.log"));
            assertThat((out + stderr).lines().filter(line -> line.contains("web UI dir " + ui)))
                    .as("lines naming " + ui + " in:\n" + out + stderr).hasSize(1);
            assertThat(out + stderr).as(ui.toString()).doesNotContain("\tat ").doesNotContain("Exception");
            assertThat(out).as("no ready line").doesNotContain("EXECUTOR_READY");
        }
    }

    @Test
    void refusesToStartBesideALiveOwnerOfTheDataDirAndClearsADeadOnesRecordAndLock() throws Exception {
        Path data = dir.resolve("data");
        Path control = Files.createDirectories(data.resolve("server-control"));
        other = new ProcessBuilder("sleep", "600").start();
        Files.writeString(control.resolve("server.json"), record(other.pid()));

        sidecar = launch(Fixture.freeLoopbackPort(), Map.of("EXECUTOR_DATA_DIR", data.toString(), "EXECUTOR_AUTH_PASSWORD", PASSWORD));
        readyPort(sidecar);
        assertThat(sidecar.waitFor(START_BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(sidecar.exitValue()).isNotZero();
        assertThat(Files.readString(dir.resolve("stderr.log"))).contains("already running").contains("pid " + other.pid())
                .doesNotContain("\tat ");
        assertThat(control.resolve("server.json")).as("another server's record is left alone").content().contains("" + other.pid());
        assertThat(control.resolve("startup.lock")).doesNotExist();

        Files.delete(control.resolve("server.json"));
        Files.writeString(control.resolve("startup.lock"), "{\"pid\": " + other.pid() + ", \"startedAt\": \"x\"}");
        sidecar = launch(Fixture.freeLoopbackPort(), Map.of("EXECUTOR_DATA_DIR", data.toString(), "EXECUTOR_AUTH_PASSWORD", PASSWORD));
        readyPort(sidecar);
        assertThat(sidecar.waitFor(START_BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(Files.readString(dir.resolve("stderr.log"))).contains("is starting in this data dir");

        other.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        Files.writeString(control.resolve("server.json"), record(other.pid()));
        int port = Fixture.freeLoopbackPort();
        sidecar = launch(port, Map.of("EXECUTOR_DATA_DIR", data.toString(), "EXECUTOR_AUTH_PASSWORD", PASSWORD));
        assertThat(readyPort(sidecar).get(START_BOUND.toSeconds(), TimeUnit.SECONDS)).isEqualTo(port);
        assertThat(JsonMapper.builder().build().readTree(Files.readString(control.resolve("server.json"))).path("pid").asLong())
                .as("the dead server's record is replaced").isEqualTo(sidecar.pid());
        assertThat(control.resolve("startup.lock")).as("the dead starter's lock is cleared").doesNotExist();
    }

    private Process launch(int port, Map<String, String> extra) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(Fixture.projectRoot().resolve("bin/executor-sidecar").toString())
                .redirectError(dir.resolve("stderr.log").toFile());
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(name -> name.startsWith("EXECUTOR_") || name.startsWith("TETHER_"));
        Map<String, String> app = new HashMap<>(Map.of("EXECUTOR_PORT", Integer.toString(port), "EXECUTOR_HOST", "127.0.0.1",
                "EXECUTOR_WEB_BASE_URL", "http://127.0.0.1:" + port, "EXECUTOR_CLIENT", "desktop",
                "HOME", dir.resolve("home").toString(), "TETHER_JAR", PackagedDaemon.jarOrSkip().toString()));
        app.putAll(extra);
        env.putAll(app);
        return builder.start();
    }

    /** The port of the first ready line on stdout, read as the app reads it; the rest of stdout is drained. */
    private static CompletableFuture<Integer> readyPort(Process process) {
        CompletableFuture<Integer> port = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    Matcher ready = READY.matcher(line);
                    if (ready.find()) {
                        port.complete(Integer.parseInt(ready.group(1)));
                    }
                }
                port.completeExceptionally(new IllegalStateException("stdout ended without a ready line"));
            }
            catch (IOException ex) {
                port.completeExceptionally(ex);
            }
        }, "sidecar-stdout");
        reader.setDaemon(true);
        reader.start();
        return port;
    }

    private static String record(long pid) {
        return """
                {"version": 1, "kind": "desktop-sidecar", "pid": %d, "startedAt": "2026-01-01T00:00:00.000Z",
                 "dataDir": "/elsewhere", "scopeDir": null,
                 "connection": {"kind": "desktop-sidecar", "key": "desktop-sidecar", "origin": "http://127.0.0.1:1"},
                 "owner": {"client": "desktop", "version": null, "executablePath": null}}
                """.formatted(pid);
    }
}
