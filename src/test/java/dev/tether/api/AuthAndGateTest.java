package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

import dev.tether.TetherApplication;
import dev.tether.api.ApiClient.Reply;
import dev.tether.testsupport.Fixture;

/**
 * The bearer token and the stdio gate, on daemons started here as an operator starts them (command-line properties,
 * no fixed token): the token file Executor's way, which routes need the token, and that a daemon listening beyond
 * loopback refuses stdio servers unless the operator allowed them on purpose.
 */
class AuthAndGateTest {

    private static final String REALM = "Bearer realm=\"executor\", Basic realm=\"executor\"";

    @TempDir
    static Path root;

    // Each test starts and closes its own daemons, one at a time: daemons in one JVM share Reactor Netty's global
    // event loops, which closing any of them shuts down.

    @Test
    void firstStartCreatesAnOwnerOnlyTokenFileThatARestartReuses() throws IOException {
        Path dataDir = root.resolve("restart");
        Path file = tokenFile(dataDir);
        assertThat(file).doesNotExist();
        String stored;
        try (ConfigurableApplicationContext first = start(dataDir)) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
            stored = Files.readString(file);
            assertThat(token(dataDir)).hasSizeGreaterThanOrEqualTo(32);
            assertThat(new ApiClient(port(first), token(dataDir)).get("/api/integrations").status()).isEqualTo(200);
        }
        try (ConfigurableApplicationContext again = start(dataDir)) {
            assertThat(Files.readString(file)).as("the restart keeps the token file as it was").isEqualTo(stored);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
            assertThat(new ApiClient(port(again), token(dataDir)).get("/api/integrations").status()).isEqualTo(200);
        }
    }

    /** Every route the daemon documents (from its own /api/docs), an unknown one and the agent endpoint. */
    @Test
    void onlyHealthAndDocsAreOpenEveryOtherRouteRefusesAMissingOrWrongToken() throws IOException {
        Path dataDir = root.resolve("routes");
        try (ConfigurableApplicationContext daemon = start(dataDir)) {
            String token = token(dataDir);
            ApiClient anonymous = new ApiClient(port(daemon), null);
            Reply health = anonymous.get("/api/health");
            assertThat(health.status()).isEqualTo(200);
            assertThat(health.body()).isEqualTo("ok");
            Reply docs = anonymous.get("/api/docs");
            assertThat(docs.status()).isEqualTo(200);

            List<String[]> routes = new ArrayList<>();
            JsonNode paths = docs.json().path("paths");
            for (String path : paths.propertyNames()) {
                for (String method : paths.path(path).propertyNames()) {
                    routes.add(new String[] { method.toUpperCase(), concrete(path) });
                }
            }
            assertThat(routes).as("routes the daemon documents").hasSizeGreaterThanOrEqualTo(20);
            routes.removeIf(route -> route[1].equals("/api/health"));
            // The browser coming back from an authorization server, and the desktop app polling for the outcome,
            // cannot carry the token: an OAuth flow's state is their gate (docs/security.md).
            assertThat(routes.removeIf(route -> route[1].startsWith("/api/oauth/callback") || route[1].startsWith("/api/oauth/await/")))
                    .as("the OAuth callback and outcome routes are documented").isTrue();
            assertThat(anonymous.get("/api/oauth/callback?state=never-issued&code=x").status()).isEqualTo(200);
            assertThat(anonymous.get("/api/oauth/await/never-issued").body()).isEqualTo("null");
            // An authorization server fetches Tether's client metadata document (its client_id) with no token; off
            // until tether.oauth.public-base-url is set, and then public, as the Client ID Metadata Documents draft has it.
            assertThat(routes.removeIf(route -> route[1].equals("/api/oauth/client-metadata.json")))
                    .as("the client metadata document is documented").isTrue();
            assertThat(anonymous.get("/api/oauth/client-metadata.json").tag()).isEqualTo("NotFoundError");
            assertThat(anonymous.get("/api/oauth/clients").status()).as("every other OAuth route needs it").isEqualTo(401);
            routes.add(new String[] { "GET", "/api/no/such/route" });
            routes.add(new String[] { "POST", "/mcp" });

            String lastCharChanged = token.substring(0, token.length() - 1) + (token.endsWith("0") ? "1" : "0");
            List<String> wrong = Arrays.asList(null, "", "wrong", lastCharChanged, token.substring(0, token.length() - 1), token + "0");
            for (String candidate : wrong) {
                ApiClient client = new ApiClient(port(daemon), candidate);
                for (String[] route : routes) {
                    Reply reply = client.send(route[0], route[1], route[0].equals("GET") || route[0].equals("DELETE") ? null : "{}");
                    String what = route[0] + " " + route[1] + " with token " + candidate;
                    assertThat(reply.status()).as(what + ": " + reply).isEqualTo(401);
                    assertThat(reply.header("www-authenticate")).as(what).contains(REALM);
                    assertThat(reply.tag()).as(what).isEqualTo("UnauthorizedError");
                }
            }
            assertThat(new ApiClient(port(daemon), token).get("/api/integrations").json().size()).as("nothing was written: only the built-in").isEqualTo(1);
        }
    }

    /** RFC 7235: the auth scheme's name is case-insensitive; the token itself is not. */
    @Test
    void theBearerSchemeIsAcceptedInAnyCase() throws Exception {
        try (ConfigurableApplicationContext daemon = start(root.resolve("scheme-case"), "--tether.api.token=case-token")) {
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            for (String scheme : List.of("Bearer", "bearer", "BEARER", "bEaReR")) {
                for (String path : List.of("/api/integrations", "/mcp")) {
                    java.net.http.HttpRequest request = java.net.http.HttpRequest.newBuilder(
                                    java.net.URI.create("http://127.0.0.1:" + port(daemon) + path))
                            .header("Authorization", scheme + " case-token").GET().build();
                    int status = http.send(request, java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode();
                    assertThat(status).as(scheme + " on " + path).isNotEqualTo(401);
                }
                java.net.http.HttpRequest wrongToken = java.net.http.HttpRequest.newBuilder(
                                java.net.URI.create("http://127.0.0.1:" + port(daemon) + "/api/integrations"))
                        .header("Authorization", scheme + " CASE-TOKEN").GET().build();
                assertThat(http.send(wrongToken, java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode())
                        .as("the token stays case-sensitive").isEqualTo(401);
            }
        }
    }

    /**
     * Executor also takes the bare token in {@code x-executor-token} (its {@code hasBearerToken}): either credential
     * is enough, and the header's value is the token exactly, with no scheme in front.
     */
    @Test
    void theTokenIsAlsoAcceptedInExecutorsOwnHeader() throws Exception {
        try (ConfigurableApplicationContext daemon = start(root.resolve("token-header"), "--tether.api.token=header-token")) {
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            record Case(String path, Map<String, String> headers, int status) { }
            List<Case> cases = List.of(
                    new Case("/api/integrations", Map.of("x-executor-token", "header-token"), 200),
                    new Case("/api/integrations", Map.of("X-Executor-Token", "header-token"), 200),
                    new Case("/api/integrations", Map.of("x-executor-token", "header-token", "Authorization", "Bearer wrong"), 200),
                    new Case("/api/integrations", Map.of("x-executor-token", "wrong", "Authorization", "Bearer header-token"), 200),
                    new Case("/api/integrations", Map.of("x-executor-token", "HEADER-TOKEN"), 401),
                    new Case("/api/integrations", Map.of("x-executor-token", "Bearer header-token"), 401),
                    new Case("/api/integrations", Map.of("x-executor-token", "header-toke"), 401),
                    new Case("/api/integrations", Map.of("x-executor-token", ""), 401),
                    new Case("/mcp", Map.of("x-executor-token", "wrong"), 401));
            for (Case c : cases) {
                java.net.http.HttpRequest.Builder request = java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + port(daemon) + c.path())).GET();
                c.headers().forEach(request::header);
                java.net.http.HttpResponse<String> reply = http.send(request.build(), java.net.http.HttpResponse.BodyHandlers.ofString());
                assertThat(reply.statusCode()).as(c.toString()).isEqualTo(c.status());
                if (c.status() == 401) {
                    assertThat(reply.headers().firstValue("www-authenticate")).as(c.toString()).hasValue(REALM);
                }
            }
            java.net.http.HttpRequest mcp = java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create("http://127.0.0.1:" + port(daemon) + "/mcp"))
                    .header("x-executor-token", "header-token").header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")).build();
            assertThat(http.send(mcp, java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode())
                    .as("the agent endpoint takes it too").isNotEqualTo(401);
        }
    }

    @Test
    void aDaemonOnEveryInterfaceRefusesStdioServersAndWritesNothing() throws Exception {
        try (ConfigurableApplicationContext open = start(root.resolve("gate-closed"), "--server.address=0.0.0.0",
                "--tether.api.token=gate")) {
            ApiClient api = new ApiClient(port(open), "gate");

            Reply refused = api.post("/api/mcp/servers", stdio("Local Tool"));
            assertRefused(refused);
            assertThat(api.get("/api/integrations").json().size()).as("nothing written on refusal: only the built-in").isEqualTo(1);
            assertThat(api.get("/api/connections").json().size()).isZero();

            Reply remote = api.post("/api/mcp/servers", Map.of("name", "Remote Tool", "endpoint", "http://127.0.0.1:9/mcp"));
            assertThat(remote.status()).as(remote.toString()).isEqualTo(200);
            assertThat(remote.json().path("slug").asString()).isEqualTo("remote_tool");

            Map<String, Object> stdioConfig = stdio("ignored");
            stdioConfig.remove("name");
            assertRefused(api.post("/api/mcp/servers/remote_tool/config", Map.of("config", stdioConfig)));
            JsonNode kept = api.get("/api/mcp/servers/remote_tool").json();
            assertThat(kept.path("config").path("transport").asString()).as("config unchanged on refusal").isEqualTo("remote");
            assertThat(api.get("/api/integrations").json().size()).as("the built-in and one").isEqualTo(2);
        }
    }

    @Test
    void theOperatorMayAllowStdioOnEveryInterfaceOnPurpose() {
        try (ConfigurableApplicationContext allowed = start(root.resolve("gate-open"), "--server.address=0.0.0.0",
                "--tether.stdio.allow-remote=true", "--tether.api.token=gate")) {
            ApiClient api = new ApiClient(port(allowed), "gate");
            Reply created = api.post("/api/mcp/servers", stdio("Local Tool"));
            assertThat(created.status()).as(created.toString()).isEqualTo(200);
            assertThat(api.post("/api/mcp/servers", Map.of("name", "Remote Tool", "endpoint", "http://127.0.0.1:9/mcp")).status())
                    .isEqualTo(200);
            Map<String, Object> stdioConfig = stdio("ignored");
            stdioConfig.remove("name");
            Reply changed = api.post("/api/mcp/servers/remote_tool/config", Map.of("config", stdioConfig));
            assertThat(changed.status()).as(changed.toString()).isEqualTo(200);
            assertThat(changed.json().path("config").path("transport").asString()).isEqualTo("stdio");
        }
    }

    private static void assertRefused(Reply reply) {
        assertThat(reply.status()).as(reply.toString()).isEqualTo(403);
        assertThat(reply.tag()).isEqualTo("StdioNotAllowedError");
        assertThat(reply.message()).contains("tether.stdio.allow-remote").contains("0.0.0.0");
    }

    /** Registration only stores the command; nothing runs until a session is needed. */
    private static Map<String, Object> stdio(String name) {
        List<String> command = Fixture.command();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("transport", "stdio");
        body.put("name", name);
        body.put("command", command.get(0));
        body.put("args", command.subList(1, command.size()));
        return body;
    }

    /** A documented path with its variables filled in: {@code {owner}} becomes {@code org}, the rest {@code x}. */
    private static String concrete(String path) {
        return path.replace("{owner}", "org").replaceAll("\\{[^}]+}", "x");
    }

    /**
     * Starts the daemon the way an operator does, properties on the command line (they win over application.yaml),
     * on a free port; no token is configured unless {@code extra} sets one.
     */
    private static ConfigurableApplicationContext start(Path dataDir, String... extra) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--tether.data-dir=" + dataDir,
                "--tether.docker.reap-interval=1h", "--spring.main.banner-mode=off"));
        args.addAll(List.of(extra));
        if (args.stream().noneMatch(arg -> arg.startsWith("--tether.api.token="))) {
            args.add("--tether.api.token="); // blank: the daemon's own token file, whatever the environment says
        }
        return new SpringApplicationBuilder(TetherApplication.class).run(args.toArray(String[]::new));
    }

    private static int port(ConfigurableApplicationContext context) {
        return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    }

    private static String token(Path dataDir) throws IOException {
        return ApiClient.JSON.readTree(Files.readString(tokenFile(dataDir))).path("token").asString();
    }

    private static Path tokenFile(Path dataDir) {
        return dataDir.resolve("server-control").resolve("auth.json");
    }
}
