package dev.tether.webui;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import dev.tether.TetherApplication;
import dev.tether.daemon.StartupFailure;

/**
 * The web UI as the desktop app loads it: served from a directory by Executor's rules, behind the app's password
 * (HTTP Basic) or the token, on a daemon started here with the settings {@code bin/executor-sidecar} gives it.
 */
class WebUiTest {

    private static final String PASSWORD = "app-password";
    private static final String INDEX = "<!doctype html><title>Executor</title><script src=\"/assets/index-AbC123.js\"></script>";
    private static final String CHUNK = "export const x = 1;";

    @TempDir
    static Path root;

    private static Path ui;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void webUi() throws IOException {
        ui = Files.createDirectories(root.resolve("web-ui"));
        Files.writeString(ui.resolve("index.html"), INDEX);
        Files.createDirectories(ui.resolve("assets"));
        Files.writeString(ui.resolve("assets/index-AbC123.js"), CHUNK);
        Files.writeString(ui.resolve("assets/index-Zz9.css"), "body{}");
        Files.write(ui.resolve("favicon.ico"), new byte[] { 0, 0, 1, 0 });
        Files.writeString(root.resolve("secret.txt"), "outside the UI dir");
    }

    // One daemon at a time: daemons in one JVM share Reactor Netty's event loops, which closing one shuts down.

    @Test
    void servesFilesAsTheyAreIndexForAppRoutesAndA404ForAMissingAsset() throws Exception {
        try (ConfigurableApplicationContext daemon = start("ui", "--tether.web-ui.dir=" + ui, "--tether.api.password=" + PASSWORD)) {
            String basic = basic("executor", PASSWORD);

            HttpResponse<String> index = get(daemon, "/", basic);
            assertThat(index.statusCode()).isEqualTo(200);
            assertThat(index.body()).isEqualTo(INDEX);
            assertThat(index.headers().firstValue("content-type")).hasValueSatisfying(type -> assertThat(type).startsWith("text/html"));
            assertThat(index.headers().firstValue("cache-control")).as("index.html names the current assets").hasValue("no-cache");

            HttpResponse<String> chunk = get(daemon, "/assets/index-AbC123.js", basic);
            assertThat(chunk.statusCode()).isEqualTo(200);
            assertThat(chunk.body()).isEqualTo(CHUNK);
            assertThat(chunk.headers().firstValue("content-type")).hasValueSatisfying(type -> assertThat(type).contains("javascript"));
            assertThat(chunk.headers().firstValue("cache-control")).hasValue("max-age=31536000, public, immutable");
            assertThat(get(daemon, "/assets/index-Zz9.css", basic).headers().firstValue("content-type"))
                    .hasValueSatisfying(type -> assertThat(type).startsWith("text/css"));
            HttpResponse<String> favicon = get(daemon, "/favicon.ico", basic);
            assertThat(favicon.statusCode()).isEqualTo(200);
            assertThat(favicon.headers().firstValue("cache-control")).as("not hashed: not cached for long").hasValue("no-cache");

            for (String route : List.of("/integrations/github", "/resume/exec_01JX9", "/policies", "/secrets")) {
                HttpResponse<String> page = get(daemon, route, basic);
                assertThat(page.statusCode()).as(route).isEqualTo(200);
                assertThat(page.body()).as(route).isEqualTo(INDEX);
            }
            for (String missing : List.of("/assets/index-Gone42.js", "/missing.png", "/integrations/x/app.js")) {
                HttpResponse<String> answer = get(daemon, missing, basic);
                assertThat(answer.statusCode()).as(missing).isEqualTo(404);
                assertThat(answer.body()).as(missing + " is no page").doesNotContain("<title>");
            }
            for (String escape : List.of("/../secret.txt", "/assets/%2e%2e/%2e%2e/secret.txt", "/assets/..%2f..%2fsecret.txt")) {
                assertThat(get(daemon, escape, basic).body()).as(escape).doesNotContain("outside the UI dir");
            }
            HttpResponse<String> unknownApi = get(daemon, "/api/nothing-here", basic);
            assertThat(unknownApi.statusCode()).as("the API's roots stay the API's").isEqualTo(404);
            assertThat(unknownApi.body()).doesNotContain("<title>");
        }
    }

    @Test
    void thePasswordGuardsTheUiAndTheApiBesideTheTokenAndAWrongOneGetsExecutorsChallenge() throws Exception {
        try (ConfigurableApplicationContext daemon = start("auth", "--tether.web-ui.dir=" + ui,
                "--tether.api.password=" + PASSWORD, "--tether.api.token=the-token")) {
            for (String path : List.of("/", "/assets/index-AbC123.js", "/api/integrations", "/resume/exec_1")) {
                assertThat(get(daemon, path, basic("executor", PASSWORD)).statusCode()).as(path).isEqualTo(200);
                assertThat(get(daemon, path, basic("anyone", PASSWORD)).statusCode()).as("any user name, as Executor").isEqualTo(200);
                assertThat(get(daemon, path, "Bearer the-token").statusCode()).as(path + " by token").isEqualTo(200);
                for (String wrong : new String[] { null, basic("executor", "wrong"), basic("executor", PASSWORD + "x"),
                        "Basic not-base64!", basic("executor", ""), "Basic " + PASSWORD, "Bearer " + PASSWORD }) {
                    HttpResponse<String> refused = get(daemon, path, wrong);
                    assertThat(refused.statusCode()).as(path + " with " + wrong).isEqualTo(401);
                    assertThat(refused.headers().firstValue("www-authenticate"))
                            .hasValue("Bearer realm=\"executor\", Basic realm=\"executor\"");
                }
            }
            assertThat(get(daemon, "/api/health", null).statusCode()).as("liveness stays open").isEqualTo(200);
        }
    }

    @Test
    void withoutAPasswordTheSidecarAsksNoCredentialOnLoopbackAndRefusesToListenBeyondIt() throws Exception {
        try (ConfigurableApplicationContext daemon = start("open", "--tether.web-ui.dir=" + ui, "--tether.api.require-auth=false")) {
            assertThat(get(daemon, "/", null).statusCode()).isEqualTo(200);
            assertThat(get(daemon, "/api/integrations", null).statusCode()).isEqualTo(200);
            HttpResponse<String> rebound = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(daemon) + "/api/integrations"))
                    .header("Origin", "http://evil.example").build(), HttpResponse.BodyHandlers.ofString());
            assertThat(rebound.statusCode()).as("foreign pages are still refused").isEqualTo(403);
        }
        assertThatThrownBy(() -> start("open-wide", "--server.address=0.0.0.0", "--tether.api.require-auth=false"))
                .satisfies(failure -> assertThat(StartupFailure.in(failure)).hasValueSatisfying(found ->
                        assertThat(found.getMessage()).contains("require-auth=false").contains("loopback").contains("0.0.0.0")));
    }

    @Test
    void aMissingOrUnusableUiDirStopsTheStartWithOneLineNamingIt() throws IOException {
        Path missing = root.resolve("no-such-ui");
        Path empty = Files.createDirectories(root.resolve("empty-ui"));
        Path file = Files.writeString(root.resolve("ui-file"), "x");
        for (Path dir : List.of(missing, empty, file)) {
            assertThatThrownBy(() -> start("bad-" + dir.getFileName(), "--tether.web-ui.dir=" + dir))
                    .satisfies(failure -> assertThat(StartupFailure.in(failure)).hasValueSatisfying(found -> {
                        assertThat(found.getMessage()).contains("web UI dir " + dir).doesNotContain("\n");
                        assertThat(found.getStackTrace()).isEmpty();
                    }));
        }
    }

    @Test
    void withoutAUiDirNothingIsServedOutsideTheApi() throws Exception {
        try (ConfigurableApplicationContext daemon = start("none", "--tether.api.token=t")) {
            assertThat(get(daemon, "/", "Bearer t").statusCode()).isEqualTo(404);
            assertThat(get(daemon, "/integrations/x", "Bearer t").statusCode()).isEqualTo(404);
        }
    }

    private HttpResponse<String> get(ConfigurableApplicationContext daemon, String path, String authorization)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(daemon) + path))
                .timeout(Duration.ofSeconds(30));
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    private static ConfigurableApplicationContext start(String name, String... extra) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--tether.data-dir=" + root.resolve(name),
                "--tether.docker.reap-interval=1h", "--spring.main.banner-mode=off", "--tether.discovery.enabled=false"));
        args.addAll(List.of(extra));
        if (args.stream().noneMatch(arg -> arg.startsWith("--tether.api.token="))) {
            args.add("--tether.api.token=");
        }
        return new SpringApplicationBuilder(TetherApplication.class).run(args.toArray(String[]::new));
    }

    private static int port(ConfigurableApplicationContext context) {
        return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    }
}
