package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

import dev.tether.api.ApiClient.Reply;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.OsProcesses;

/**
 * Whatever a client sends wrong gets a tagged 4xx whose message names the problem, and leaves nothing behind: no
 * integration whose registration failed, no connection that was refused. Concurrent creates of one slug: one wins.
 */
class BadInputTest extends BadInputDaemon {

    private static final String RUN = UUID.randomUUID().toString().substring(0, 12);
    private static final String DECODE = "HttpApiDecodeError";
    private static final String CONNECTION_INPUT = "InvalidConnectionInputError";
    /** What 1.5.9 declares for a 400 under /api/mcp. */
    private static final String MCP_INPUT = "McpConnectionError";

    @AfterEach
    void removeIntegrations() {
        try {
            for (JsonNode integration : api.get("/api/integrations").json()) {
                api.delete("/api/integrations/" + integration.path("slug").asString());
            }
            OsProcesses.awaitNoneMatching("--run=" + RUN, Duration.ofSeconds(20));
        }
        finally {
            OsProcesses.matching("--run=" + RUN).forEach(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void malformedServerRegistrations() {
        refused(api.post("/api/mcp/servers", "{\"transport\":\"stdio\","), MCP_INPUT, "JSON");
        refused(api.post("/api/mcp/servers", "not json at all"), MCP_INPUT, "JSON");
        refused(api.send("POST", "/api/mcp/servers", null), MCP_INPUT, "body");
        refused(api.post("/api/mcp/servers", "[]"), MCP_INPUT, "Array");
        refused(api.post("/api/mcp/servers", "null"), MCP_INPUT, "body");
        refused(api.post("/api/mcp/servers", "{\"transport\":\"stdio\",\"name\":{\"nested\":1},\"command\":\"node\"}"), MCP_INPUT, "name");
        refused(api.post("/api/mcp/servers", "{\"transport\":\"stdio\",\"name\":\"typed\",\"command\":\"node\",\"args\":\"--flag\"}"),
                MCP_INPUT, "args");
        refused(api.post("/api/mcp/servers", "{\"transport\":\"stdio\",\"name\":\"typed\",\"command\":\"node\",\"env\":[\"A=1\"]}"),
                MCP_INPUT, "env");
        refused(api.post("/api/mcp/servers", "{\"transport\":\"stdio\",\"name\":\"typed\",\"command\":\"node\",\"args\":[null]}"),
                MCP_INPUT, "`args`");
        refused(api.post("/api/mcp/servers", "{\"name\":\"typed\",\"endpoint\":\"http://127.0.0.1:9/mcp\",\"headers\":{\"X\":null}}"),
                MCP_INPUT, "`headers`");

        Map<String, Object> noName = stdio(null, null);
        refused(api.post("/api/mcp/servers", noName), MCP_INPUT, "`name`");
        Map<String, Object> blankName = stdio("  ", null);
        refused(api.post("/api/mcp/servers", blankName), MCP_INPUT, "`name`");
        Map<String, Object> noCommand = stdio("No Command", null);
        noCommand.remove("command");
        refused(api.post("/api/mcp/servers", noCommand), MCP_INPUT, "`command`");
        refused(api.post("/api/mcp/servers", Map.of("name", "No Endpoint")), MCP_INPUT, "`endpoint`");
        refused(api.post("/api/mcp/servers", Map.of("name", "No Endpoint", "transport", "remote", "endpoint", "")), MCP_INPUT, "`endpoint`");
        refused(api.post("/api/mcp/servers", Map.of("name", "Bad Endpoint", "endpoint", "ftp://example.com/mcp")), MCP_INPUT, "`endpoint`");
        refused(api.post("/api/mcp/servers", Map.of("name", "Bad Endpoint", "endpoint", "http://exa mple.com/")), MCP_INPUT, "`endpoint`");

        assertNoIntegrations();
    }

    /** The desktop UI's routes: a malformed body is a tagged 400 naming the problem, and what was stored stays. */
    @Test
    void malformedBodiesOfTheDesktopRoutes() {
        refused(api.post("/api/integrations/detect", "not json"), DECODE, "JSON");
        refused(api.post("/api/integrations/detect", "{}"), DECODE, "`url`");
        refused(api.post("/api/integrations/detect", "{\"url\":5}"), DECODE, "url");

        Map<String, Object> binding = Map.of("auth", Map.of("kind", "desktop-app", "accountName", "kept.1password.com"), "vaultId", "v1",
                "name", "Kept");
        assertThat(api.send("PUT", "/api/onepassword/config", binding).status()).isEqualTo(200);
        String kept = api.get("/api/onepassword/config").body();
        refused(api.send("PUT", "/api/onepassword/config", "{\"auth\":"), DECODE, "JSON");
        refused(api.send("PUT", "/api/onepassword/config", Map.of("vaultId", "v2", "name", "x")), DECODE, "`auth`");
        refused(api.send("PUT", "/api/onepassword/config", Map.of("auth", Map.of("kind", "service-account"), "vaultId", "v2", "name", "x")),
                DECODE, "`auth`");
        refused(api.send("PUT", "/api/onepassword/config", Map.of("auth", Map.of("kind", "desktop-app", "accountName", "a"), "name", "x")),
                DECODE, "`vaultId`");
        refused(api.send("PUT", "/api/onepassword/config", "{\"auth\":{\"kind\":\"desktop-app\",\"accountName\":1},\"vaultId\":\"v\",\"name\":\"n\"}"),
                DECODE, "accountName");
        refused(api.get("/api/onepassword/vaults?authKind=telepathy&account=a"), DECODE, "`authKind`", "telepathy");
        refused(api.get("/api/onepassword/vaults?authKind=desktop-app"), DECODE, "`account`");
        assertThat(api.get("/api/onepassword/config").body()).as("refused bindings lose nothing stored").isEqualTo(kept);
        assertThat(api.send("DELETE", "/api/onepassword/config", null).status()).isEqualTo(200);

        assertThat(api.post("/api/mcp/servers", Map.of("name", "Auth Kept", "endpoint", "http://127.0.0.1:9/mcp")).status()).isEqualTo(200);
        String server = api.get("/api/mcp/servers/auth_kept").body();
        refused(api.post("/api/mcp/servers/auth_kept/auth", "[]"), MCP_INPUT, "Array");
        refused(api.post("/api/mcp/servers/auth_kept/auth", Map.of()), MCP_INPUT, "`authenticationTemplate`");
        refused(api.post("/api/mcp/servers/auth_kept/auth", Map.of("authenticationTemplate", "none")), MCP_INPUT, "array");
        refused(api.post("/api/mcp/servers/auth_kept/auth", Map.of("authenticationTemplate", List.of(Map.of("kind", "kerberos")))),
                MCP_INPUT, "authenticationTemplate[0]");
        refused(api.post("/api/mcp/servers/auth_kept/auth", Map.of("authenticationTemplate", List.of(Map.of("kind", "none", "extra", 1)))),
                MCP_INPUT, "extra");
        refused(api.post("/api/mcp/servers/auth_kept/auth", Map.of("authenticationTemplate", List.of(Map.of("type", "apiKey",
                "headers", Map.of("A", List.of(Map.of("type", "variable", "name", "a"), Map.of("type", "variable", "name", "b"))))))),
                MCP_INPUT, "ONE variable");
        refused(api.post("/api/mcp/servers/auth_kept/auth", Map.of("authenticationTemplate", List.of(), "mode", "upsert")),
                MCP_INPUT, "`mode`", "upsert");
        refused(api.post("/api/mcp/servers", Map.of("name", "Bad Auth", "endpoint", "http://127.0.0.1:9/mcp",
                "auth", Map.of("kind", "header"))), MCP_INPUT, "headerName");
        assertThat(api.get("/api/mcp/servers/auth_kept").body()).as("refused auth methods lose nothing stored").isEqualTo(server);
        assertThat(api.get("/api/mcp/servers/bad_auth").body()).isEqualTo("null");
    }

    @Test
    void unknownFieldValues() {
        refused(api.post("/api/mcp/servers", Map.of("transport", "telnet", "name", "Telnet", "command", "node")),
                MCP_INPUT, "`transport`", "telnet");
        refused(api.post("/api/mcp/servers", Map.of("name", "Pigeon", "endpoint", "http://127.0.0.1:9/mcp",
                "remoteTransport", "carrier-pigeon")), MCP_INPUT, "`remoteTransport`", "carrier-pigeon");
        assertNoIntegrations();

        register("owned");
        Map<String, Object> team = connection("owned", "team-conn");
        team.put("owner", "team");
        refused(api.post("/api/connections", team), CONNECTION_INPUT, "`owner`", "team");
        refused(api.get("/api/connections?owner=team"), DECODE, "`owner`", "team");
        refused(api.get("/api/connections/team/owned/default"), DECODE, "`owner`", "team");
        refused(api.get("/api/tools?owner=team"), DECODE, "`owner`", "team");
        Map<String, Object> noOwner = connection("owned", "no-owner");
        noOwner.remove("owner");
        refused(api.post("/api/connections", noOwner), CONNECTION_INPUT, "`owner`");
        Map<String, Object> noTemplate = connection("owned", "no-template");
        noTemplate.remove("template");
        refused(api.post("/api/connections", noTemplate), CONNECTION_INPUT, "`template`");
        assertThat(connectionNames("owned")).as("only the server's own connection").containsExactly("default");
    }

    @Test
    void badAndDuplicateSlugs() {
        refused(api.post("/api/mcp/servers", stdio("Good Name", "Bad Slug!")), MCP_INPUT, "`slug`", "Bad Slug!");
        refused(api.post("/api/mcp/servers", stdio("!!!", null)), MCP_INPUT, "`name`", "slug");
        assertNoIntegrations();

        assertThat(api.post("/api/mcp/servers", stdio("My Server", null)).json().path("slug").asString()).isEqualTo("my_server");
        Reply clash = api.post("/api/mcp/servers", stdio("my-server", null));
        assertThat(clash.status()).as(clash.toString()).isEqualTo(409);
        assertThat(clash.tag()).isEqualTo("IntegrationAlreadyExistsError");
        assertThat(clash.json().path("slug").asString()).isEqualTo("my_server");
        Reply explicit = api.post("/api/mcp/servers", stdio("Another", "my_server"));
        assertThat(explicit.status()).as(explicit.toString()).isEqualTo(409);
        assertThat(api.get("/api/integrations").json().size()).as("the built-in and one").isEqualTo(2);
        assertThat(connectionNames("my_server")).as("registering makes no connection, as in Executor").isEmpty();
    }

    @Test
    void connectionCreateNeedsExactlyOneCredentialSource() {
        register("creds");
        Map<String, Object> none = connection("creds", "none");
        none.remove("value");
        refused(api.post("/api/connections", none), CONNECTION_INPUT, "exactly one of", "got 0");
        Map<String, Object> two = connection("creds", "two");
        two.put("values", Map.of("TOKEN", "b"));
        refused(api.post("/api/connections", two), CONNECTION_INPUT, "exactly one of", "got 2");
        Map<String, Object> three = connection("creds", "three");
        three.put("values", Map.of("TOKEN", "b"));
        three.put("from", Map.of("provider", "onepassword", "id", "x"));
        refused(api.post("/api/connections", three), CONNECTION_INPUT, "exactly one of", "got 3");
        Map<String, Object> from = connection("creds", "from");
        from.remove("value");
        from.put("from", Map.of("provider", "onepassword", "id", "x"));
        refused(api.post("/api/connections", from), CONNECTION_INPUT, "`from`");
        refused(api.post("/api/connections", "{\"owner\":\"user\",\"name\":\"typed\",\"integration\":\"creds\",\"template\":\"T\","
                + "\"values\":\"not-a-map\"}"), CONNECTION_INPUT, "values");
        assertThat(connectionNames("creds")).containsExactly("default");

        Reply patched = api.patch("/api/connections/org/creds/default", Map.of("value", "a", "values", Map.of("T", "b")));
        refused(patched, CONNECTION_INPUT, "at most one of");
        refused(api.post("/api/connections/validate", Map.of("integration", "creds", "value", "a", "values", Map.of("T", "b"))),
                CONNECTION_INPUT, "at most one of");
        refused(api.post("/api/connections/validate", Map.of("value", "a")), DECODE, "`integration`");
    }

    @Test
    void aRefusedConnectionLeavesNothing() {
        Reply unknown = api.post("/api/connections", connection("ghost", "mine"));
        assertThat(unknown.status()).as(unknown.toString()).isEqualTo(404);
        assertThat(unknown.tag()).isEqualTo("IntegrationNotFoundError");
        assertThat(unknown.json().path("slug").asString()).isEqualTo("ghost");
        assertThat(api.get("/api/connections?integration=ghost").json().size()).isZero();
        assertThat(api.get("/api/connections").json().size()).isZero();
        assertNoIntegrations();

        register("kept");
        Map<String, Object> first = connection("kept", "mine");
        first.put("identityLabel", "first");
        assertThat(api.post("/api/connections", first).status()).isEqualTo(200);
        Map<String, Object> second = connection("kept", "mine");
        second.put("identityLabel", "second");
        refused(api.post("/api/connections", second), CONNECTION_INPUT, "user/kept/mine", "already exists");
        assertThat(api.get("/api/connections/user/kept/mine").json().path("identityLabel").asString())
                .as("the duplicate changed nothing").isEqualTo("first");

        Reply missing = api.patch("/api/connections/user/kept/nope", Map.of("identityLabel", "x"));
        assertThat(missing.status()).as(missing.toString()).isEqualTo(404);
        assertThat(missing.tag()).isEqualTo("ConnectionNotFoundError");
        assertThat(connectionNames("kept")).containsExactly("default", "mine");
    }

    @Test
    void integrationPatchRejectsAnEmptyName() {
        register("named");
        refused(api.patch("/api/integrations/named", Map.of("name", "")), DECODE, "`name`");
        refused(api.patch("/api/integrations/named", "{\"description\":"), DECODE, "JSON");
        refused(api.post("/api/mcp/servers/named/config", Map.of()), MCP_INPUT, "`config`");
        refused(api.post("/api/mcp/servers/named/config", Map.of("config", Map.of("transport", "telnet"))), MCP_INPUT, "`transport`");
        assertThat(api.get("/api/mcp/servers/named").json().path("config").path("transport").asString()).isEqualTo("stdio");
    }

    @Test
    void ifStaleMsOutOfRange() {
        register("stale");
        for (String value : List.of("-1", "86400001", "abc", "1.5", "99999999999999999999")) {
            refused(api.post("/api/connections/org/stale/default/health?ifStaleMs=" + value, null), DECODE, "`ifStaleMs`", value);
        }
        assertThat(api.get("/api/connections/org/stale/default").json().has("lastHealth"))
                .as("no refused check ran, so no verdict was stored").isFalse();

        for (String bound : List.of("0", "86400000")) {
            Reply accepted = api.post("/api/connections/org/stale/default/health?ifStaleMs=" + bound, null);
            assertThat(accepted.status()).as(bound + ": " + accepted).isEqualTo(200);
            assertThat(accepted.json().path("status").asString()).isEqualTo("healthy");
        }
    }

    @Test
    void unknownToolAddresses() {
        register("tooled");
        for (String address : List.of("tools.tooled.org.default.no_such", "tools.ghost.org.default.echo", "tools.tooled.team.default.echo",
                "not-an-address", "tools.a.b")) {
            Reply schema = api.get("/api/tools/schema?address=" + address);
            assertThat(schema.status()).as(address + ": " + schema).isEqualTo(404);
            assertThat(schema.tag()).isEqualTo("ToolNotFoundError");
            assertThat(schema.json().path("address").asString()).isEqualTo(address);

            Reply call = api.post("/api/tools/call", Map.of("address", address, "args", Map.of()));
            assertThat(call.status()).as(address + ": " + call).isEqualTo(404);
            assertThat(call.tag()).isEqualTo("ToolNotFoundError");
            assertThat(call.json().path("address").asString()).isEqualTo(address);
        }
        refused(api.get("/api/tools/schema"), DECODE, "`address`");
        refused(api.post("/api/tools/call", Map.of("args", Map.of())), DECODE, "`address`");
        refused(api.post("/api/tools/call", "{\"address\":"), DECODE, "JSON");
        refused(api.post("/api/tools/call", "{\"address\":\"tools.tooled.org.default.echo\",\"args\":[1]}"), DECODE, "args");
    }

    @Test
    void concurrentCreatesOfOneSlugHaveOneWinner() {
        List<CompletableFuture<Reply>> replies = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            replies.add(api.sendAsync("POST", "/api/mcp/servers", stdio("Racer " + i, "racer")));
        }
        List<Reply> answers = replies.stream().map(CompletableFuture::join).toList();
        assertThat(answers).filteredOn(reply -> reply.status() == 200).as(answers.toString()).hasSize(1);
        assertThat(answers).filteredOn(reply -> reply.status() == 409).as(answers.toString()).hasSize(9)
                .allSatisfy(reply -> assertThat(reply.tag()).isEqualTo("IntegrationAlreadyExistsError"));
        assertThat(api.get("/api/integrations").json().size()).as("the built-in and one").isEqualTo(2);
        assertThat(connectionNames("racer")).isEmpty();

        List<Reply> connections = IntStream.range(0, 10)
                .mapToObj(i -> api.sendAsync("POST", "/api/connections", connection("racer", "same")))
                .toList().stream().map(CompletableFuture::join).toList();
        assertThat(connections).filteredOn(reply -> reply.status() == 200).as(connections.toString()).hasSize(1);
        assertThat(connections).filteredOn(reply -> reply.status() == 400).as(connections.toString()).hasSize(9)
                .allSatisfy(reply -> assertThat(reply.message()).contains("already exists"));
        assertThat(connectionNames("racer")).containsExactly("same");
    }

    // ---- helpers ---------------------------------------------------------------------------

    /** A 400 with this tag whose message contains every {@code named} text. */
    private static void refused(Reply reply, String tag, String... named) {
        assertThat(reply.status()).as(reply.toString()).isEqualTo(400);
        assertThat(reply.tag()).as(reply.toString()).isEqualTo(tag);
        assertThat(reply.message()).as(reply.toString()).isNotBlank();
        for (String text : named) {
            assertThat(reply.message()).as(reply.toString()).contains(text);
        }
    }

    /** Registers a server and makes its connection {@code org/<slug>/default}, as Executor's app does. */
    private void register(String slug) {
        Reply created = api.post("/api/mcp/servers", stdio(slug, slug));
        assertThat(created.status()).as(created.toString()).isEqualTo(200);
        Reply connected = api.post("/api/connections", TetherClient.defaultConnection(slug));
        assertThat(connected.status()).as(connected.toString()).isEqualTo(200);
    }

    private void assertNoIntegrations() {
        assertThat(api.get("/api/integrations").json().size()).as("no integration may linger beside the built-in").isEqualTo(1);
        assertThat(api.get("/api/connections").json().size()).as("nor a connection of one").isZero();
    }

    private List<String> connectionNames(String integration) {
        return api.get("/api/connections?integration=" + integration).json().valueStream()
                .map(c -> c.path("name").asString()).toList();
    }

    private static Map<String, Object> stdio(String name, String slug) {
        List<String> command = Fixture.command("--run=" + RUN);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("transport", "stdio");
        if (name != null) {
            body.put("name", name);
        }
        if (slug != null) {
            body.put("slug", slug);
        }
        body.put("command", command.get(0));
        body.put("args", command.subList(1, command.size()));
        return body;
    }

    private static Map<String, Object> connection(String integration, String name) {
        return new LinkedHashMap<>(Map.of("owner", "user", "name", name, "integration", integration, "template", "TOKEN",
                "value", "secret"));
    }
}
