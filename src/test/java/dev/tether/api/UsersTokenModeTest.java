package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

import dev.tether.TetherApplication;
import dev.tether.api.ApiClient.Reply;
import dev.tether.api.UsersWalk.Answer;
import dev.tether.api.UsersWalk.Caller;
import dev.tether.api.UsersWalk.World;

/**
 * A shared gateway in its default mode, with users made by personal API tokens: the admin (the daemon's token) issues
 * tokens for alice and bob (members) and val (a viewer). Bob walks every route, {@code /mcp} and {@code /mcp/tools}
 * aimed at alice's rows and learns nothing of them; alice's agent runs code on her own connection and bob cannot resume
 * her paused executions; the viewer changes nothing; a revoked token stops at once; and the audit trail holds every one
 * of bob's calls with his subject and no secret, nor do the logs.
 */
@InProcess
@ExtendWith(OutputCaptureExtension.class)
class UsersTokenModeTest {

    private static final String ADMIN_TOKEN = "users-admin-token";

    @TempDir
    static Path dataDir;

    private static ConfigurableApplicationContext daemon;
    private static int port;
    private static UsersWalk walk;
    private static Caller admin;
    private static Caller alice;
    private static Caller bob;
    private static Caller val;
    private static World world;

    @BeforeAll
    static void start() throws Exception {
        daemon = new SpringApplicationBuilder(TetherApplication.class).run("--server.port=0", "--tether.data-dir=" + dataDir,
                "--tether.docker.reap-interval=1h", "--spring.main.banner-mode=off", "--tether.api.token=" + ADMIN_TOKEN);
        port = Integer.parseInt(daemon.getEnvironment().getProperty("local.server.port"));
        walk = new UsersWalk(port);
        admin = new Caller("admin", port, ADMIN_TOKEN);
        alice = new Caller("alice", port, issue("alice", "member"));
        bob = new Caller("bob", port, issue("bob", "member"));
        val = new Caller("val", port, issue("val", "viewer"));
        world = walk.build(admin, alice);
    }

    @AfterAll
    static void stop() {
        if (daemon != null) {
            daemon.close();
        }
    }

    private static String issue(String subject, String role) {
        Reply issued = UsersWalk.ok(admin.api().post("/api/tokens", Map.of("name", subject + "'s", "subject", subject, "role", role)));
        assertThat(issued.json().path("tokenInfo").path("subject").asString()).isEqualTo(subject);
        return issued.json().path("token").asString();
    }

    @Test
    void bobsWalkAimedAtAlicesRowsLeaksNothingAndTheTrailHoldsEveryCall(CapturedOutput output) throws Exception {
        List<String[]> routes = UsersWalk.documented(admin.api());
        List<Answer> answers = walk.walk(bob, world, routes);
        assertThat(routes).as("the routes the daemon documents").hasSizeGreaterThanOrEqualTo(51);

        Set<String> marks = Set.of(UsersWalk.A_LABEL, UsersWalk.A_CLIENT_ID, UsersWalk.A_PATTERN, UsersWalk.A_CODE_MARK,
                UsersWalk.A_TOKEN_NAME);
        Map<Integer, Integer> statuses = new TreeMap<>();
        for (Answer answer : answers) {
            statuses.merge(answer.status(), 1, Integer::sum);
            for (String secret : world.secrets()) {
                assertThat(answer.said()).as("no secret in " + answer).doesNotContain(secret);
            }
            for (String mark : marks) {
                assertThat(answer.said()).as("nothing of alice's in " + answer).doesNotContain(mark);
            }
            if (answer.status() == UsersWalk.OPEN_STREAM) {
                assertThat(answer.path()).as("only a stream may say nothing: " + answer).endsWith("/events");
                continue;
            }
            assertThat(answer.status()).as("an answer, and no failure: " + answer).isBetween(200, 499);
        }
        // What names alice's own rows by their ids is not found (or refused) for bob; Executor answers removals of
        // policies {removed: true} whatever they find, and alice's policy is checked below to be there still.
        for (Answer answer : answers) {
            boolean aimed = answer.path().contains(world.executionId()) || answer.path().contains(world.mcpExecutionId())
                    || answer.path().contains(world.aTokenId()) || answer.path().contains(world.mcpSession())
                    || answer.path().startsWith("/api/oauth/complete");
            boolean executorAnswersRemoved = answer.method().equals("DELETE") && answer.path().startsWith("/api/policies/");
            if (aimed && !executorAnswersRemoved) {
                assertThat(answer.status()).as(answer.toString()).isIn(403, 404);
            }
        }
        System.out.println("bob's walk: " + answers.size() + " requests over " + routes.size() + " documented routes; statuses "
                + statuses);

        aliceFindsHerWorldAsSheLeftIt();

        // The trail: every request bob made, with his subject, and no secret in any event of the whole trail.
        List<JsonNode> events = trail(admin.api(), "bob");
        Set<String> recorded = events.stream().filter(event -> event.path("action").asString().equals("request"))
                .map(event -> event.path("target").asString()).collect(Collectors.toSet());
        for (Answer answer : answers) {
            String target = answer.method() + " " + answer.path().replaceAll("\\?.*", "");
            if (UsersWalk.open(answer.path())) {
                continue; // asks for no credentials, so names nobody: the flow's owner is in the trail for what it does
            }
            assertThat(recorded).as("bob's " + target + " in the audit trail").contains(target);
        }
        assertThat(events).allSatisfy(event -> assertThat(event.path("subject").asString()).isEqualTo("bob"));
        String whole = trail(admin.api(), null).toString();
        String logs = output.getAll();
        for (String secret : world.secrets()) {
            assertThat(whole).as("the audit trail names no secret").doesNotContain(secret);
            assertThat(logs).as("the logs name no secret").doesNotContain(secret);
        }
        for (Caller caller : List.of(alice, bob, val)) {
            assertThat(whole).doesNotContain(caller.bearer());
            assertThat(logs).as("the logs name no token").doesNotContain(caller.bearer());
        }
        assertThat(logs).doesNotContain(ADMIN_TOKEN);
        assertThat(logs).as("the trail is in the logs too").contains("audit action=request").contains("subject=bob");
    }

    /** Alice's connection, app, policy, flow, executions and token are all hers and all there. */
    private static void aliceFindsHerWorldAsSheLeftIt() throws Exception {
        ApiClient api = alice.api();
        JsonNode connection = UsersWalk.ok(api.get("/api/connections/user/walk/aliceconn")).json();
        assertThat(connection.path("identityLabel").asString()).isEqualTo(UsersWalk.A_LABEL);
        JsonNode called = UsersWalk.ok(api.post("/api/tools/call", Map.of("address", "tools.walk.user.aliceconn.env",
                "args", Map.of("name", "WALK_SECRET")))).json();
        assertThat(called.toString()).as("her connection still has her credential").contains(UsersWalk.sha256(world.aSecret()));
        assertThat(UsersWalk.ok(api.get("/api/oauth/clients")).body()).contains(UsersWalk.A_CLIENT_ID);
        assertThat(UsersWalk.ok(api.get("/api/policies")).body()).contains(world.policyId());
        assertThat(UsersWalk.ok(api.get("/api/executions/" + world.executionId())).body()).contains(world.executionId());
        assertThat(UsersWalk.ok(api.get("/api/tokens")).body()).contains(world.aTokenId()).doesNotContain("revokedAt\":\"");
        // Her flow is still in flight: completing it reaches the (unreachable) token endpoint, and stays redeemable.
        Reply complete = api.post("/api/oauth/complete", Map.of("state", world.oauthState(), "code", "x"));
        assertThat(complete.tag()).as(complete.toString()).isEqualTo("OAuthCompleteError");
        UsersWalk.McpSession mine = UsersWalk.McpSession.open(walk, "/mcp", alice.bearer());
        assertThat(mine.id()).isNotEqualTo(world.mcpSession());
    }

    @Test
    void alicesAgentRunsCodeOnHerOwnConnectionAndBobCannotResumeHerExecutions() throws Exception {
        UsersWalk.McpSession agent = UsersWalk.McpSession.open(walk, "/mcp", alice.bearer());
        JsonNode ran = agent.call("execute", Map.of("code", "return await tools.walk.user.aliceconn.env({name: 'WALK_SECRET'})"));
        assertThat(ran.toString()).as("alice's credential, in alice's child").contains(UsersWalk.sha256(world.aSecret()));
        JsonNode org = agent.call("execute", Map.of("code", "return await tools.walk.org.shared.env({name: 'WALK_SECRET'})"));
        assertThat(org.toString()).as("the org's connection is hers to use").contains(UsersWalk.sha256(world.orgSecret()));

        UsersWalk.McpSession bobs = UsersWalk.McpSession.open(walk, "/mcp", bob.bearer());
        JsonNode notHis = bobs.call("execute", Map.of("code", "return await tools.walk.user.aliceconn.env({name: 'WALK_SECRET'})"));
        assertThat(notHis.toString()).as("user names bob's own connection, which he has not").doesNotContain(UsersWalk.sha256(world.aSecret()))
                .containsAnyOf("not found", "tool_not_found", "No tool");
        JsonNode resumed = bobs.call("resume", Map.of("executionId", world.mcpExecutionId(), "action", "accept"));
        assertThat(resumed.toString()).contains("No paused execution");
        assertThat(bob.api().get("/api/executions/" + world.executionId()).status()).isEqualTo(404);
        Reply resumeOverApi = bob.api().post("/api/executions/" + world.executionId() + "/resume", Map.of("action", "accept"));
        assertThat(resumeOverApi.status()).as(resumeOverApi.toString()).isEqualTo(404);
        assertThat(resumeOverApi.tag()).isEqualTo("ExecutionNotFoundError");
        assertThat(UsersWalk.ok(alice.api().get("/api/executions/" + world.executionId())).body()).as("still hers, still paused")
                .contains(world.executionId());
    }

    @Test
    void aViewerReadsButChangesNothing() throws Exception {
        List<String> before = snapshot();
        ApiClient viewer = val.api();
        assertThat(viewer.get("/api/integrations").status()).isEqualTo(200);
        assertThat(viewer.get("/api/connections").status()).isEqualTo(200);
        List<Reply> refused = new ArrayList<>();
        for (String[] route : UsersWalk.documented(admin.api())) {
            if (route[0].equals("GET")) {
                continue;
            }
            String path = route[1].replace("{owner}", "org").replace("{integration}", UsersWalk.INTEGRATION)
                    .replace("{name}", "shared").replace("{slug}", UsersWalk.INTEGRATION).replaceAll("\\{[^}]+}", "x");
            Reply reply = viewer.send(route[0], path, Map.of("owner", "org", "integration", UsersWalk.INTEGRATION, "name", "shared",
                    "template", "none", "values", Map.of("WALK_SECRET", "viewer"), "pattern", "*", "action", "approve",
                    "code", "return 1", "address", "tools.walk.org.shared.env", "args", Map.of("name", "WALK_SECRET")));
            refused.add(reply);
            assertThat(reply.status()).as(route[0] + " " + path + ": " + reply).isEqualTo(403);
        }
        UsersWalk.McpSession agent = UsersWalk.McpSession.open(walk, "/mcp", val.bearer());
        JsonNode ran = agent.call("execute", Map.of("code", "return await tools.walk.org.shared.env({name: 'WALK_SECRET'})"));
        assertThat(ran.toString()).doesNotContain(UsersWalk.sha256(world.orgSecret())).contains("viewer");
        UsersWalk.McpSession tools = UsersWalk.McpSession.open(walk, "/mcp/tools", val.bearer());
        JsonNode called = tools.call("tools.walk.org.shared.env", Map.of("name", "WALK_SECRET"));
        assertThat(called.toString()).doesNotContain(UsersWalk.sha256(world.orgSecret())).contains("viewer");
        assertThat(snapshot()).as("nothing changed: " + refused.size() + " refusals").isEqualTo(before);
    }

    /** What the admin sees of the shared state, alice's rows and the tokens: what a viewer might have changed. */
    private static List<String> snapshot() {
        List<String> seen = new ArrayList<>();
        for (String path : List.of("/api/integrations", "/api/connections", "/api/policies", "/api/oauth/clients", "/api/onepassword/config",
                "/api/tokens?all=true")) {
            seen.add(UsersWalk.ok(admin.api().get(path)).body().replaceAll("\"lastUsedAt\":(null|\"[^\"]*\")", "").replaceAll(
                    "\"(lastHealth|health)\":\\{[^}]*}", ""));
        }
        for (String path : List.of("/api/connections", "/api/policies", "/api/oauth/clients")) {
            seen.add(UsersWalk.ok(alice.api().get(path)).body().replaceAll("\"(lastHealth|health)\":\\{[^}]*}", ""));
        }
        return seen;
    }

    @Test
    void aRevokedTokenStopsAtOnceAndOnlyItsOwnerOrAnAdminMayRevokeIt() {
        ApiClient carol = new ApiClient(port, issue("carol", "member"));
        String carolsTokenId = UsersWalk.ok(carol.get("/api/tokens")).json().get(0).path("id").asString();
        assertThat(carol.get("/api/connections").status()).isEqualTo(200);
        Reply bobTries = bob.api().delete("/api/tokens/" + carolsTokenId);
        assertThat(bobTries.status()).as(bobTries.toString()).isEqualTo(404);
        assertThat(carol.get("/api/connections").status()).isEqualTo(200);
        UsersWalk.ok(admin.api().delete("/api/tokens/" + carolsTokenId));
        Reply after = carol.get("/api/connections");
        assertThat(after.status()).as(after.toString()).isEqualTo(401);
        assertThat(after.tag()).isEqualTo("UnauthorizedError");
    }

    @Test
    void tokensAreScopedToTheirIssuersRoleAndOnlyAnAdminIssuesForOthers() {
        Reply forOther = bob.api().post("/api/tokens", Map.of("name", "sneaky", "subject", "alice"));
        assertThat(forOther.status()).as(forOther.toString()).isEqualTo(403);
        Reply higher = bob.api().post("/api/tokens", Map.of("name", "higher", "role", "admin"));
        assertThat(higher.status()).as(higher.toString()).isEqualTo(403);
        Reply tooLong = bob.api().post("/api/tokens", Map.of("name", "long", "expiresInDays", 400));
        assertThat(tooLong.status()).as(tooLong.toString()).isEqualTo(400);
        String narrow = UsersWalk.ok(bob.api().post("/api/tokens", Map.of("name", "read only", "role", "viewer", "expiresInDays", 1)))
                .json().path("token").asString();
        ApiClient reader = new ApiClient(port, narrow);
        assertThat(reader.get("/api/connections").status()).isEqualTo(200);
        assertThat(reader.post("/api/policies", Map.of("owner", "user", "pattern", "*", "action", "block")).status()).isEqualTo(403);
        assertThat(bob.api().get("/api/audit").status()).as("the trail is the admins'").isEqualTo(403);
        assertThat(bob.api().get("/api/tokens?all=true").status()).isEqualTo(403);
    }

    /** Every event of the trail (of {@code subject} when given), page by page. */
    static List<JsonNode> trail(ApiClient admin, String subject) {
        List<JsonNode> events = new ArrayList<>();
        String next = null;
        do {
            String query = "/api/audit?limit=1000" + (subject == null ? "" : "&subject=" + subject) + (next == null ? "" : "&before=" + next);
            JsonNode page = UsersWalk.ok(admin.get(query)).json();
            page.path("events").forEach(events::add);
            next = page.path("next").isNull() || page.path("next").isMissingNode() ? null : page.path("next").asString();
        } while (next != null);
        return events;
    }
}
