package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.StreamSupport;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import reactor.core.Disposable;
import tools.jackson.databind.JsonNode;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.OsProcesses;

/**
 * Executor's HTTP contract as Tether serves it, with real plain child processes (the fixture): auth, the
 * token file, registering servers, connections, health verdicts, tool catalogs, and the errors a client sees.
 * The token is the one the daemon wrote to its data dir, as the Executor app reads it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext
@ExtendWith(OutputCaptureExtension.class)
@InProcess
class ApiContractTest {

    /** When a teardown is called stuck: the ladder's defaults (1 s + 2 s + 2 s) take seconds; only a failure waits this. */
    private static final Duration TEARDOWN_BOUND = Duration.ofSeconds(60);

    private static final Path DATA_DIR = DataDirs.create("contract");
    private static final String RUN = UUID.randomUUID().toString();

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @LocalServerPort
    int port;

    private TetherClient tether;
    private Path work;

    @BeforeEach
    void connect() throws IOException {
        tether = new TetherClient(port, DataDirs.token(DATA_DIR));
        work = Files.createDirectories(DATA_DIR.resolve("work-" + UUID.randomUUID()));
    }

    @AfterEach
    void cleanUp() {
        MarkedProcesses.kill(RUN);
        LoggingSystem.get(getClass().getClassLoader()).setLogLevel("dev.tether", null);
    }

    /** The most talkative the daemon gets, for tests that check what it never says. */
    private void debugLogging() {
        LoggingSystem.get(getClass().getClassLoader()).setLogLevel("dev.tether", LogLevel.DEBUG);
    }

    // ---- auth ------------------------------------------------------------------------------------------

    @Test
    void daemonHealthIsOpen() {
        Reply reply = tether.withToken(null).get("/api/health");

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.body()).isEqualTo("ok");
        assertThat(reply.headers().getContentType().toString()).startsWith("text/plain");
    }

    @ParameterizedTest
    @ValueSource(strings = { "GET /api/integrations", "GET /api/connections", "GET /api/tools", "POST /api/mcp/servers",
            "GET /api/mcp/servers/x", "DELETE /api/mcp/servers/x", "POST /api/connections",
            "GET /api/connections/org/x/default", "POST /api/connections/org/x/default/health",
            "POST /api/connections/org/x/default/refresh" })
    void everyOtherRouteNeedsTheToken(String route) {
        HttpMethod method = HttpMethod.valueOf(route.split(" ")[0]);
        String path = route.split(" ")[1];
        String token = DataDirs.token(DATA_DIR);
        long spawned = spawned();

        for (String wrong : new String[] { null, "", "wrong", token + "x", token.substring(1) }) {
            Reply reply = tether.withToken(wrong).call(method, path, method == HttpMethod.POST ? Map.of() : null);

            assertThat(reply.status()).as("%s with token %s", route, wrong).isEqualTo(401);
            assertThat(reply.headers().getFirst(HttpHeaders.WWW_AUTHENTICATE)).isEqualTo("Bearer realm=\"executor\", Basic realm=\"executor\"");
            assertThat(reply.json().get("_tag").asString()).isNotBlank();
        }
        assertThat(spawned()).as("nothing was started for an unauthorized request").isEqualTo(spawned);
    }

    @ParameterizedTest
    @ValueSource(strings = { "//api/integrations", "/%61pi/integrations", "/api/%69ntegrations", "/api//integrations",
            "/api/integrations/", "/api/./integrations", "/api/health/../integrations", "/api/health/%2e%2e/integrations",
            "/%2Fapi/integrations", "/api;x=1/integrations", "/api/health;/../integrations" })
    void noSpellingOfAPathDodgesTheToken(String path) {
        tether.register("spelled_" + Integer.toHexString(path.hashCode()), Fixture.command());

        Reply reply = tether.withToken(null).raw(HttpMethod.GET, path);

        assertThat(reply.status()).as("%s: %s", path, reply).isIn(401, 404);
        assertThat(reply.body()).as(path).doesNotContain("spelled_");
    }

    @Test
    void whatNoRouteServesIsAClientErrorNotAnInternalOne() {
        Reply unknown = tether.get("/api/no-such-route");
        Reply outside = tether.get("/no-such-page");
        Reply wrongMethod = tether.call(HttpMethod.PUT, "/api/integrations", Map.of());
        Reply wrongType = tether.call(HttpMethod.POST, "/api/mcp/servers", null);

        assertThat(unknown.status()).as("%s", unknown).isEqualTo(404);
        assertThat(unknown.json().get("_tag").asString()).isEqualTo("RouteNotFound");
        assertThat(outside.status()).as("%s", outside).isEqualTo(404);
        assertThat(wrongMethod.status()).as("%s", wrongMethod).isEqualTo(405);
        assertThat(wrongMethod.headers().getAllow()).contains(HttpMethod.GET);
        assertThat(wrongType.status()).as("%s", wrongType).isIn(400, 415);
        assertThat(List.of(unknown, outside, wrongMethod, wrongType)).allSatisfy(reply ->
                assertThat(reply.json().get("_tag").asString()).isNotEqualTo("InternalError"));
    }

    @Test
    void theTokenIsCreatedOnFirstStartReadableByTheOwnerOnly() throws IOException {
        Path auth = DataDirs.authFile(DATA_DIR);

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(auth))).isEqualTo("rw-------");
        String token = DataDirs.token(DATA_DIR);
        assertThat(token).hasSizeGreaterThanOrEqualTo(32);
        assertThat(tether.withToken(token).get("/api/integrations").status()).isEqualTo(200);
    }

    // ---- MCP servers and integrations --------------------------------------------------------------------

    @Test
    void registerListGetAndDeleteAServerWithoutEverShowingItsEnvValues(CapturedOutput output) {
        debugLogging();
        String secret = "s3cret-" + UUID.randomUUID();
        Map<String, String> env = marked(Map.of("API_KEY", secret));
        String slug = tether.register("registered", Fixture.command("--tools=2"), env);

        assertThat(slug).isEqualTo("registered");
        JsonNode integration = find(tether.get("/api/integrations").json(), "slug", slug);
        assertThat(integration.get("kind").asString()).isEqualTo("mcp");
        assertThat(integration.get("canRemove").asBoolean()).isTrue();

        Reply server = tether.get("/api/mcp/servers/" + slug);
        assertThat(server.status()).isEqualTo(200);
        assertThat(server.json().at("/config/transport").asString()).isEqualTo("stdio");
        assertThat(server.json().at("/config/command").asString()).isEqualTo(Fixture.nodeBinary().toString());
        assertThat(server.json().at("/config/env/API_KEY").asString()).isEqualTo("********");
        assertThat(server.body()).doesNotContain(secret);

        JsonNode connections = tether.get("/api/connections?integration=" + slug).json();
        assertThat(connections).hasSize(1);
        assertThat(connections.get(0).get("owner").asString()).isEqualTo("org");
        assertThat(connections.get(0).get("name").asString()).isEqualTo("default");
        assertThat(connections.get(0).get("address").asString()).isEqualTo("tools." + slug + ".org.default");

        assertThat(tether.health(slug).json().get("status").asString()).isEqualTo("healthy");

        Reply removed = tether.delete("/api/mcp/servers/" + slug);
        assertThat(removed.status()).isEqualTo(200);
        assertThat(removed.json().get("removed").asBoolean()).isTrue();
        // Executor 1.5.9 answers an unknown server with 200 null, not a 404.
        Reply gone = tether.get("/api/mcp/servers/" + slug);
        assertThat(gone.status()).isEqualTo(200);
        assertThat(gone.json().isNull()).isTrue();
        assertThat(tether.get("/api/integrations/" + slug).json().get("_tag").asString()).isEqualTo("IntegrationNotFoundError");
        assertThat(tether.get("/api/connections/org/" + slug + "/default").status()).isEqualTo(404);
        assertThat(tether.get("/api/integrations").body()).doesNotContain("\"" + slug + "\"");
        assertThat(output.getAll()).as("the daemon's debug log names the variable").contains("API_KEY");
        assertThat(output.getAll()).as("the daemon's debug log").doesNotContain(secret);
    }

    @Test
    void aSlugIsDerivedFromTheNameAsExecutorDoes() {
        Reply reply = tether.post("/api/mcp/servers", Map.of("transport", "stdio", "name", "My Jira -- Server 2",
                "command", "node"));

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.json().get("slug").asString()).isEqualTo("my_jira_server_2");
    }

    @Test
    void aDuplicateSlugIsAConflict() {
        tether.register("duplicate", Fixture.command());

        Reply again = tether.post("/api/mcp/servers", server("duplicate", Fixture.command()));

        assertThat(again.status()).isEqualTo(409);
        assertThat(again.json().get("_tag").asString()).isEqualTo("IntegrationAlreadyExistsError");
        assertThat(again.json().get("slug").asString()).isEqualTo("duplicate");
    }

    @ParameterizedTest
    @ValueSource(strings = { "name", "command" })
    void aMissingRequiredFieldIsABadRequestNamingIt(String field) {
        for (Object missing : new Object[] { null, "", "  " }) {
            Map<String, Object> body = server("without_" + field, Fixture.command());
            body.put(field, missing);
            if (missing == null) {
                body.remove(field);
            }

            Reply reply = tether.post("/api/mcp/servers", body);

            assertThat(reply.status()).as("%s = %s: %s", field, missing, reply).isEqualTo(400);
            assertThat(reply.json().get("_tag").asString()).as("what 1.5.9 declares for this route's 400").isEqualTo("McpConnectionError");
            assertThat(reply.json().get("message").asString()).contains(field);
        }
        assertThat(tether.get("/api/integrations/without_" + field).status()).as("nothing registered").isEqualTo(404);
    }

    /** Tagged with what 1.5.9 declares for the route's 400. */
    @ParameterizedTest
    @ValueSource(strings = { "/api/mcp/servers=McpConnectionError", "/api/connections=InvalidConnectionInputError" })
    void malformedJsonIsABadRequest(String route) {
        String path = route.split("=")[0];
        for (String body : new String[] { "{\"transport\": \"stdio\", \"name\": ", "not json at all", "[1, 2" }) {
            Reply reply = tether.post(path, body.getBytes(StandardCharsets.UTF_8));

            assertThat(reply.status()).as("%s <- %s: %s", path, body, reply).isEqualTo(400);
            assertThat(reply.json().get("_tag").asString()).isEqualTo(route.split("=")[1]);
        }
    }

    @Test
    void badValuesInAServerAreBadRequestsNamingTheField() {
        Map<String, Object> nullArg = server("null_arg", Fixture.command());
        nullArg.put("args", java.util.Arrays.asList("a", null));
        Map<String, Object> nullEnv = server("null_env", Fixture.command());
        Map<String, String> env = new HashMap<>();
        env.put("API_KEY", null);
        nullEnv.put("env", env);
        Map<String, Object> badSlug = server("Not A Slug", Fixture.command());
        Map<String, Object> remote = server("remote", Fixture.command());
        remote.put("transport", "remote"); // remote without an endpoint

        Map<String, Map<String, Object>> cases = new LinkedHashMap<>();
        cases.put("args", nullArg);
        cases.put("env", nullEnv);
        cases.put("slug", badSlug);
        cases.put("endpoint", remote);
        cases.forEach((field, body) -> {
            Reply reply = tether.post("/api/mcp/servers", body);
            assertThat(reply.status()).as("%s: %s", field, reply).isEqualTo(400);
            assertThat(reply.json().get("message").asString()).as("%s", reply).contains(field);
        });
    }

    // ---- connections -----------------------------------------------------------------------------------

    @Test
    void anUnknownConnectionIsNotFoundNamingIt() {
        tether.register("known", Fixture.command());

        for (String[] route : new String[][] { { "GET", "/api/connections/org/nope/default" },
                { "POST", "/api/connections/org/nope/default/health" }, { "POST", "/api/connections/org/nope/default/refresh" },
                { "POST", "/api/connections/org/known/other/health" }, { "GET", "/api/connections/user/known/default" } }) {
            Reply reply = tether.call(HttpMethod.valueOf(route[0]), route[1], null);
            String[] key = route[1].split("/");

            assertThat(reply.status()).as("%s %s: %s", route[0], route[1], reply).isEqualTo(404);
            JsonNode error = reply.json();
            assertThat(error.get("_tag").asString()).isEqualTo("ConnectionNotFoundError");
            assertThat(error.get("owner").asString()).isEqualTo(key[3]);
            assertThat(error.get("integration").asString()).isEqualTo(key[4]);
            assertThat(error.get("name").asString()).isEqualTo(key[5]);
        }
    }

    @Test
    void anOwnerOtherThanOrgOrUserIsABadRequest() {
        String slug = tether.register("owned", Fixture.command());

        List<Reply> replies = List.of(
                tether.get("/api/connections/team/" + slug + "/default"),
                tether.post("/api/connections/team/" + slug + "/default/health", null),
                tether.post("/api/connections/team/" + slug + "/default/refresh", null),
                tether.delete("/api/connections/team/" + slug + "/default"),
                tether.get("/api/connections?owner=team"),
                tether.get("/api/tools?owner=team"),
                tether.post("/api/connections", connection(slug, "team", "x", Map.of("values", Map.of("A", "b")))));

        assertThat(replies).allSatisfy(reply -> {
            assertThat(reply.status()).as("%s", reply).isEqualTo(400);
            assertThat(reply.json().get("message").asString()).contains("owner");
        });
    }

    @Test
    void aConnectionTakesExactlyOneOfValueAndValues() {
        String slug = tether.register("credentials", Fixture.command());

        Reply both = tether.post("/api/connections", connection(slug, "org", "both",
                Map.of("value", "a", "values", Map.of("A", "b"))));
        Reply none = tether.post("/api/connections", connection(slug, "org", "none", Map.of()));
        Map<String, String> nullValue = new HashMap<>();
        nullValue.put("A", null);
        Reply withNull = tether.post("/api/connections", connection(slug, "org", "null_value", Map.of("values", nullValue)));

        for (Reply reply : List.of(both, none, withNull)) {
            assertThat(reply.status()).as("%s", reply).isEqualTo(400);
            assertThat(reply.json().get("_tag").asString()).isEqualTo("InvalidConnectionInputError");
        }
        assertThat(tether.get("/api/connections/org/" + slug + "/both").status()).isEqualTo(404);
        assertThat(tether.get("/api/connections/org/" + slug + "/none").status()).isEqualTo(404);
        assertThat(tether.get("/api/connections/org/" + slug + "/null_value").status()).isEqualTo(404);
        assertThat(withNull.json().get("message").asString()).contains("values");
    }

    @Test
    void aConnectionOfAnUnknownIntegrationIsNotFound() {
        Reply reply = tether.post("/api/connections", connection("no_such_integration", "org", "x", Map.of("value", "v")));

        assertThat(reply.status()).isEqualTo(404);
        assertThat(reply.json().get("_tag").asString()).isEqualTo("IntegrationNotFoundError");
    }

    @Test
    void connectionValuesReachTheServersEnvironmentAndAreNeverShown(CapturedOutput output) throws IOException {
        debugLogging();
        String secret = "value-" + UUID.randomUUID();
        String single = "single-" + UUID.randomUUID();
        Path pid = work.resolve("pid");
        String slug = tether.register("with_env", Fixture.command("--hang-on-initialize", "--pid-file=" + pid),
                marked(Map.of("FROM_INTEGRATION", "integration-value")));
        Reply created = tether.post("/api/connections", connection(slug, "user", "mine",
                Map.of("values", Map.of("SERVICE_TOKEN", secret), "identityLabel", "me@example.com")));
        Reply createdSingle = tether.post("/api/connections", connection(slug, "org", "single", Map.of("value", single)));

        assertThat(created.status()).as("%s", created).isEqualTo(200);
        assertThat(created.json().get("address").asString()).isEqualTo("tools." + slug + ".user.mine");
        assertThat(created.json().get("identityLabel").asString()).isEqualTo("me@example.com");
        assertThat(createdSingle.status()).as("%s", createdSingle).isEqualTo(200);

        // The server hangs in the handshake, so it is alive while the OS is asked what environment it got.
        assertThat(environmentOfCheckedServer(slug, "user", "mine", pid))
                .contains("SERVICE_TOKEN=" + secret, "FROM_INTEGRATION=integration-value");
        Files.delete(pid);
        assertThat(environmentOfCheckedServer(slug, "org", "single", pid))
                .as("a single value is kept under the template's name").contains("TEMPLATE_VAR=" + single);

        for (String path : List.of("/api/connections", "/api/connections/user/" + slug + "/mine", "/api/mcp/servers/" + slug,
                "/api/connections?owner=user")) {
            assertThat(tether.get(path).body()).as(path).doesNotContain(secret).doesNotContain(single);
        }
        assertThat(output.getAll()).as("the daemon's debug log names the variables").contains("SERVICE_TOKEN", "TEMPLATE_VAR");
        assertThat(output.getAll()).as("the daemon's debug log").doesNotContain(secret).doesNotContain(single);
    }

    /** Starts a check of the connection, reads the server's environment from /proc, then leaves. */
    private List<String> environmentOfCheckedServer(String slug, String owner, String name, Path pidFile) throws IOException {
        Disposable check = tether.exchange(HttpMethod.POST, "/api/connections/" + owner + "/" + slug + "/" + name + "/health", null)
                .subscribe(reply -> { }, error -> { });
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(pidFile) && !Files.readString(pidFile).isBlank());
            long pid = Long.parseLong(Files.readAllLines(pidFile).get(0));
            byte[] environ = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ"));
            return List.of(new String(environ, StandardCharsets.UTF_8).split("\0"));
        }
        finally {
            check.dispose();
        }
    }

    @Test
    void deletingAConnectionOrItsIntegrationTearsDownItsWarmServer() throws IOException {
        Path pid = work.resolve("pid");
        String slug = tether.register("deleted", Fixture.command("--pid-file=" + pid), marked(Map.of()));
        tether.post("/api/connections", connection(slug, "org", "second", Map.of("values", Map.of("A", "b"))));

        assertThat(tether.health(slug).json().get("status").asString()).isEqualTo("healthy");
        long warm = Long.parseLong(Files.readAllLines(pid).get(0));
        assertThat(OsProcesses.alive(warm)).as("the session stays warm after the check").isTrue();
        assertThat(tether.delete("/api/connections/org/" + slug + "/default").json().get("removed").asBoolean()).isTrue();
        OsProcesses.awaitGone(List.of(warm), TEARDOWN_BOUND);

        assertThat(tether.post(TetherClient.healthPath(slug, "second"), null).json().get("status").asString()).isEqualTo("healthy");
        long second = Long.parseLong(Files.readAllLines(pid).get(0));
        assertThat(second).isNotEqualTo(warm);
        assertThat(tether.delete("/api/mcp/servers/" + slug).json().get("removed").asBoolean()).isTrue();
        OsProcesses.awaitGone(List.of(second), TEARDOWN_BOUND);
    }

    // ---- health ----------------------------------------------------------------------------------------

    @Test
    void aHealthyServerIsHealthyAndTheVerdictIsPersisted() {
        String slug = tether.register("healthy", Fixture.command(), marked(Map.of()));
        long before = System.currentTimeMillis();

        Reply reply = tether.health(slug);

        assertThat(reply.status()).isEqualTo(200);
        JsonNode verdict = reply.json();
        assertThat(verdict.get("status").asString()).isEqualTo("healthy");
        assertThat(verdict.get("checkedAt").asLong()).isBetween(before, System.currentTimeMillis());
        assertThat(verdict.has("detail")).isFalse();
        JsonNode lastHealth = tether.get("/api/connections/org/" + slug + "/default").json().get("lastHealth");
        assertThat(lastHealth.get("status").asString()).isEqualTo("healthy");
        assertThat(lastHealth.get("checkedAt").asLong()).isEqualTo(verdict.get("checkedAt").asLong());
    }

    @ParameterizedTest
    @ValueSource(strings = { "-1", "86400001", "abc", "1.5", "9223372036854775808" })
    void ifStaleMsOutOfRangeIsABadRequest(String ifStaleMs) {
        String slug = tether.register("stale_" + Math.abs(ifStaleMs.hashCode()), Fixture.command(), marked(Map.of()));
        long spawned = spawned();

        Reply reply = tether.post(TetherClient.healthPath(slug, "default") + "?ifStaleMs=" + ifStaleMs, null);

        assertThat(reply.status()).as("%s", reply).isEqualTo(400);
        assertThat(reply.json().get("_tag").asString()).isEqualTo("HttpApiDecodeError");
        assertThat(reply.json().get("message").asString()).contains("ifStaleMs");
        assertThat(spawned()).isEqualTo(spawned);
    }

    @Test
    void ifStaleMsAnswersTheStoredVerdictWithoutProbing() throws IOException {
        Path record = work.resolve("record");
        String slug = tether.register("cached", Fixture.command("--record=" + record), marked(Map.of()));
        long first = tether.health(slug).json().get("checkedAt").asLong();
        long pings = pings(record);
        long spawned = spawned();
        double cached = tether.metrics().healthChecks("cached");

        for (String ifStaleMs : List.of("60000", "86400000")) {
            JsonNode verdict = tether.post(TetherClient.healthPath(slug, "default") + "?ifStaleMs=" + ifStaleMs, null).json();
            assertThat(verdict.get("status").asString()).isEqualTo("healthy");
            assertThat(verdict.get("checkedAt").asLong()).as("the stored verdict").isEqualTo(first);
        }

        assertThat(pings(record)).as("the server was not asked").isEqualTo(pings);
        assertThat(spawned()).as("nothing was started").isEqualTo(spawned);
        assertThat(tether.metrics().healthChecks("cached")).isEqualTo(cached + 2);

        JsonNode fresh = tether.post(TetherClient.healthPath(slug, "default") + "?ifStaleMs=0", null).json();
        assertThat(fresh.get("checkedAt").asLong()).as("ifStaleMs=0 always probes").isGreaterThan(first);
        assertThat(pings(record)).isEqualTo(pings + 1);
    }

    @Test
    void aCommandThatDoesNotExistIsDegradedNamingIt() {
        String command = "/nonexistent/tether-no-such-server-" + UUID.randomUUID();
        String slug = tether.register("missing_command", List.of(command, "--stdio"));
        long spawned = spawned();

        JsonNode verdict = tether.health(slug).json();

        assertThat(verdict.get("status").asString()).isEqualTo("degraded");
        assertThat(verdict.get("detail").asString()).contains(command);
        assertThat(spawned()).as("nothing was started").isEqualTo(spawned);
        assertThat(OsProcesses.matching(command)).isEmpty();
        assertThat(tether.get("/api/connections/org/" + slug + "/default").json().at("/lastHealth/status").asString())
                .isEqualTo("degraded");
    }

    @Test
    void aServerThatExitsAtStartIsDegradedWithItsExitCodeAndStderr() {
        String slug = tether.register("exits", Fixture.command("--exit-at-start=7"), marked(Map.of()));

        JsonNode verdict = tether.health(slug).json();

        assertThat(verdict.get("status").asString()).isEqualTo("degraded");
        assertThat(verdict.get("detail").asString()).contains("exited with code 7").contains("failing at start on purpose");
        MarkedProcesses.awaitNone(RUN, TEARDOWN_BOUND);
    }

    @Test
    void aServerThatWritesNonJsonIsDegradedWithAClearDetail() {
        String slug = tether.register("non_json", Fixture.command("--non-json"), marked(Map.of()));

        JsonNode verdict = tether.health(slug).json();

        assertThat(verdict.get("status").asString()).isEqualTo("degraded");
        assertThat(verdict.get("detail").asString()).contains("JSON").contains("this is not json");
        // Not its pid file: the verdict can come (and the teardown start) before the server has written it.
        MarkedProcesses.awaitNone(RUN, TEARDOWN_BOUND);
    }

    // ---- tools -----------------------------------------------------------------------------------------

    @Test
    void refreshListsToolsUnderExecutorAddresses() {
        String slug = tether.register("tooled", Fixture.command("--tools=2"), marked(Map.of()));

        Reply refreshed = tether.post("/api/connections/org/" + slug + "/default/refresh", null);

        assertThat(refreshed.status()).as("%s", refreshed).isEqualTo(200);
        List<String> addresses = new ArrayList<>();
        refreshed.json().forEach(tool -> addresses.add(tool.get("address").asString()));
        String prefix = "tools." + slug + ".org.default.";
        assertThat(addresses).containsExactlyInAnyOrder(prefix + "echo", prefix + "slow", prefix + "hang", prefix + "crash",
                prefix + "delete_everything", prefix + "tool_1", prefix + "tool_2");
        JsonNode echo = find(refreshed.json(), "name", "echo");
        assertThat(echo.get("integration").asString()).isEqualTo(slug);
        assertThat(echo.get("owner").asString()).isEqualTo("org");
        assertThat(echo.get("connection").asString()).isEqualTo("default");
        assertThat(echo.get("description").asString()).isEqualTo("Echoes args.text back");

        long spawned = spawned();
        JsonNode listed = tether.get("/api/tools?includeAnnotations=true&integration=" + slug).json();
        assertThat(listed).hasSize(7);
        JsonNode destructive = find(listed, "name", "delete_everything");
        assertThat(destructive.get("requiresApproval").asBoolean()).isTrue();
        assertThat(destructive.get("description").asString()).isEqualTo("MCP tool: delete_everything");
        assertThat(find(listed, "name", "echo").path("requiresApproval").asBoolean(false)).isFalse();
        assertThat(spawned()).as("a fresh catalog is answered from the store").isEqualTo(spawned);

        JsonNode queried = tether.get("/api/tools?integration=" + slug + "&query=DELETE").json();
        assertThat(queried).hasSize(1);
        assertThat(queried.get(0).get("address").asString()).isEqualTo(prefix + "delete_everything");
    }

    // ---- helpers ---------------------------------------------------------------------------------------

    private long spawned() {
        return (long) tether.metrics().spawned();
    }

    private static long pings(Path record) throws IOException {
        return Files.exists(record) ? Files.readAllLines(record).stream().filter("ping"::equals).count() : 0;
    }

    /** The env with this test's marker added, so clean-up finds every process the server starts. */
    private static Map<String, String> marked(Map<String, String> env) {
        Map<String, String> withMarker = new HashMap<>(env);
        withMarker.put(MarkedProcesses.VARIABLE, RUN);
        return withMarker;
    }

    private static Map<String, Object> server(String slug, List<String> argv) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("transport", "stdio");
        body.put("name", "Server " + slug);
        body.put("slug", slug);
        body.put("command", argv.get(0));
        body.put("args", argv.subList(1, argv.size()));
        body.put("env", Map.of(MarkedProcesses.VARIABLE, RUN));
        return body;
    }

    private static Map<String, Object> connection(String integration, String owner, String name, Map<String, Object> extra) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("owner", owner);
        body.put("name", name);
        body.put("integration", integration);
        body.put("template", "TEMPLATE_VAR");
        body.putAll(extra);
        return body;
    }

    private static JsonNode find(JsonNode array, String field, String value) {
        return StreamSupport.stream(array.spliterator(), false)
                .filter(node -> value.equals(node.path(field).asString(null)))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no element with " + field + "=" + value + " in " + array));
    }
}
