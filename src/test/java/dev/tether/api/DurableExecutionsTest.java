package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.r2dbc.core.DatabaseClient;
import tools.jackson.databind.JsonNode;

import dev.tether.api.TetherClient.Reply;
import dev.tether.identity.Principal;
import dev.tether.identity.Via;
import dev.tether.store.ExecutionJournals;
import dev.tether.store.ExecutionJournals.PauseWrite;
import dev.tether.store.ExecutionJournals.StoredJournal;
import dev.tether.testsupport.Fixture;

/**
 * Paused executions survive the daemon that paused them: the daemon stops (its contexts are gone), starts again on the
 * same data dir, and the pause is shown and resumed from its journal in the store. The fixture server writes down every
 * call it answers, so each test proves what reached it: the calls before the pause once, never again, and the approved
 * call exactly once. Daemons in the test JVM, embedded H2; {@code DurableExecutionsIT} does the same with {@code kill -9}
 * of the packaged daemon and across replicas.
 */
@InProcess
class DurableExecutionsTest {

    /** Whom the daemon's token makes every request here: its journals are that user's. */
    private static final Principal LOCAL = Principal.local(Principal.DEFAULT_TENANT, Via.DAEMON_TOKEN);

    @TempDir
    Path dataDir;

    private final List<ConfigurableApplicationContext> daemons = new ArrayList<>();

    @AfterEach
    void stop() {
        daemons.forEach(ConfigurableApplicationContext::close);
    }

    @Test
    void aPauseSurvivesARestartAndItsApprovedCallReachesTheServerOnce() throws IOException {
        Path calls = dataDir.resolve("calls.jsonl");
        TetherClient before = start();
        String tools = "tools." + before.registerAndSync("fx", Fixture.command("--calls=" + calls)) + ".org.default";
        String code = "const a = await " + tools + ".echo({text: 'one'});"
                + " const [b, c] = await Promise.all([" + tools + ".echo({text: 'two'}), " + tools + ".echo({text: 'three'})]);"
                + " console.log('before', a.data.content[0].text, b.data.content[0].text, c.data.content[0].text);"
                + " const d = await " + tools + ".delete_everything({}); console.log('after');"
                + " return d.data.content[0].text";
        JsonNode accepted = paused(before, code);
        JsonNode declined = paused(before, "try { await " + tools + ".delete_everything({}); return 'ran' }"
                + " catch (e) { return 'caught: ' + e.message }");
        String id = accepted.path("structured").path("executionId").asString();
        assertThat(id).matches("exec_[a-z2-7]{26}");
        assertThat(DurableRuns.received(calls)).containsExactly("echo one", "echo two", "echo three");

        restart();
        TetherClient after = client();
        Reply shown = after.get("/api/executions/" + id);
        assertThat(shown.status()).as(shown.toString()).isEqualTo(200);
        assertThat(shown.json().path("text").asString()).isEqualTo(accepted.path("text").asString());
        assertThat(shown.json().path("structured")).isEqualTo(accepted.path("structured"));

        JsonNode done = resume(after, id, "accept");
        assertThat(done.path("status").asString()).as(done.toString()).isEqualTo("completed");
        assertThat(done.path("structured").path("result").asString()).isEqualTo("nothing was deleted (fixture)");
        assertThat(done.path("structured").path("logs").toString()).isEqualTo("[\"[log] before one two three\",\"[log] after\"]");
        assertThat(DurableRuns.received(calls)).as("the calls before the pause are not sent again; the approved one is sent once")
                .containsExactly("echo one", "echo two", "echo three", "delete_everything");

        JsonNode refused = resume(after, declined.path("structured").path("executionId").asString(), "decline");
        assertThat(refused.path("structured").path("result").asString()).startsWith("caught: Tool \"fx.org.default.delete_everything\""
                + " requires approval but the request was declined");
        assertThat(DurableRuns.received(calls)).hasSize(4);

        assertThat(after.get("/api/executions/" + id).status()).as("a resumed execution is gone").isEqualTo(404);
        assertThat(after.post("/api/executions/" + id + "/resume", Map.of("action", "accept")).status()).isEqualTo(404);
        assertThat(after.metrics().sum("tether_executions_rebuilt_total", "outcome", "resumed")).isEqualTo(2);
        assertThat(journals()).as("journals of ended executions are removed").isZero();
    }

    /**
     * Twenty calls (some at once, in {@code Promise.all}) whose arguments carry what the code read from the clock and from
     * {@code Math.random()} before it paused: rebuilt after a restart, the code reads the same values and gets the same
     * answers, so what it logs again is what the server received the first time.
     */
    @Test
    void aReplayReadsTheSameClockAndRandomnessAndReachesTheSamePause() throws IOException {
        Path calls = dataDir.resolve("calls.jsonl");
        TetherClient before = start();
        String tools = "tools." + before.registerAndSync("fx", Fixture.command("--calls=" + calls)) + ".org.default";
        String code = DurableRuns.TWENTY_CALLS.formatted(tools);
        JsonNode paused = paused(before, code);
        List<String> firstRun = DurableRuns.echoed(calls);
        assertThat(firstRun).hasSize(20);

        restart();
        JsonNode done = resume(client(), paused.path("structured").path("executionId").asString(), "accept");
        assertThat(done.path("status").asString()).as(done.toString()).isEqualTo("completed");
        assertThat(done.path("isError").asBoolean()).as(done.toString()).isFalse();
        List<String> logs = done.path("structured").path("logs").valueStream().map(JsonNode::asString).toList();
        assertThat(logs).hasSize(21);
        assertThat(logs.subList(0, 20)).as("what the replay logged, against what the server received the first time")
                .containsExactlyElementsOf(firstRun.stream().map(line -> "[log] " + line).toList());
        assertThat(logs.get(20)).isEqualTo("[log] approved nothing was deleted (fixture)");
        assertThat(DurableRuns.received(calls)).as("nothing was sent twice").hasSize(21).last().asString().startsWith("delete_everything");
    }

    /**
     * A pause is its user's after the restart too: rebuilt from the journal, it is found and resumed by the user who
     * paused it, through a personal API token, and by nobody else (another user's token, the journal's row read as his,
     * the daemon's own token, whose single user is someone else as well).
     */
    @Test
    void aRebuiltPauseIsItsUsersAlone() throws IOException {
        Path calls = dataDir.resolve("calls.jsonl");
        TetherClient admin = start();
        String tools = "tools." + admin.registerAndSync("fx", Fixture.command("--calls=" + calls)) + ".org.default";
        String aliceToken = issue(admin, "alice");
        String bobToken = issue(admin, "bob");
        String id = paused(as(aliceToken), "await " + tools + ".echo({text: 'one'}); return await " + tools + ".delete_everything({})")
                .path("structured").path("executionId").asString();

        restart();
        TetherClient alice = as(aliceToken);
        TetherClient bob = as(bobToken);
        ExecutionJournals journals = daemons.get(daemons.size() - 1).getBean(ExecutionJournals.class);
        assertThat(journals.find(id, Principal.DAEMON).block()).as("the journal is stored").isNotNull();
        assertThat(journals.find(id, new Principal(Principal.DEFAULT_TENANT, "bob", dev.tether.identity.Role.ADMIN, Via.API_TOKEN, null,
                null)).blockOptional()).as("not bob's, whatever his role").isEmpty();
        for (TetherClient other : List.of(bob, client())) {
            assertThat(other.get("/api/executions/" + id).status()).isEqualTo(404);
            Reply refused = other.post("/api/executions/" + id + "/resume", Map.of("action", "accept"));
            assertThat(refused.status()).as(refused.toString()).isEqualTo(404);
        }
        assertThat(DurableRuns.received(calls)).as("nobody else's resume sent anything").containsExactly("echo one");

        assertThat(alice.get("/api/executions/" + id).status()).isEqualTo(200);
        JsonNode done = resume(alice, id, "accept");
        assertThat(done.path("status").asString()).as(done.toString()).isEqualTo("completed");
        assertThat(DurableRuns.received(calls)).containsExactly("echo one", "delete_everything");
    }

    /** A client of the running daemon with {@code token}. */
    private TetherClient as(String token) {
        return new TetherClient(Daemons.port(daemons.get(daemons.size() - 1)), token);
    }

    /** A personal API token of {@code subject}'s, a member, issued by the daemon's single user, an admin. */
    private static String issue(TetherClient admin, String subject) {
        Reply issued = admin.post("/api/tokens", Map.of("name", subject + "'s", "subject", subject, "role", "member"));
        assertThat(issued.status()).as(issued.toString()).isEqualTo(200);
        return issued.json().path("token").asString();
    }

    /** Code that no longer matches its journal (here: its stored code was changed) ends with why, and sends nothing. */
    @Test
    void aJournalThatTheCodeDivergesFromEndsTheExecutionAndSendsNothingAgain() throws IOException {
        Path calls = dataDir.resolve("calls.jsonl");
        TetherClient before = start();
        String tools = "tools." + before.registerAndSync("fx", Fixture.command("--calls=" + calls)) + ".org.default";
        String code = "await " + tools + ".echo({text: 'one'}); return await " + tools + ".delete_everything({})";
        String id = paused(before, code).path("structured").path("executionId").asString();

        restart();
        ExecutionJournals journals = daemons.get(daemons.size() - 1).getBean(ExecutionJournals.class);
        StoredJournal row = journals.find(id, Principal.DAEMON).block();
        List<String> segments = journals.segments(row.journalId()).collectList().block();
        assertThat(segments).hasSize(1);
        assertThat(journals.remove(row.journalId(), row.version()).block()).isTrue();
        journals.create(new PauseWrite(row.journalId(), id, row.holder(), row.pause(), 0, segments.get(0), row.bytes(), row.expiresAt()),
                code.replace("'one'", "'uno'"), row.origin(), LOCAL).block();

        JsonNode done = resume(client(), id, "accept");
        assertThat(done.path("isError").asBoolean()).as(done.toString()).isTrue();
        assertThat(done.path("structured").path("error").asString())
                .contains("diverged from its journal")
                .contains("call #1 is tools.fx.org.default.echo({\"text\":\"uno\"}) now, where the journal has tools.fx.org.default.echo({\"text\":\"one\"})")
                .contains("no call was sent again");
        assertThat(DurableRuns.received(calls)).containsExactly("echo one");
        assertThat(client().get("/api/executions/" + id).status()).isEqualTo(404);
        assertThat(client().metrics().sum("tether_executions_rebuilt_total", "outcome", "failed")).isEqualTo(1);
    }

    /**
     * A 10 MB answer before the pause is written once, sealed, and handed back to the rebuilt code whole; neither it nor
     * the code shows in the database's file.
     */
    @Test
    void aLargeAnswerIsStoredOnceSealedAndReplayedWhole() throws IOException {
        int bytes = 10 * 1024 * 1024;
        String marker = "marker-" + java.util.UUID.randomUUID();
        TetherClient before = start();
        String tools = "tools." + before.registerAndSync("fx", Fixture.command("--big-tool")) + ".org.default";
        String id = paused(before, "const mark = '" + marker + "'; const big = await " + tools + ".big({bytes: " + bytes + "});"
                + " await " + tools + ".delete_everything({}); return big.data.content[0].text.length + ':' + mark.length")
                .path("structured").path("executionId").asString();

        long stored = sql("SELECT SUM(LENGTH(entries)) AS n FROM execution_journal_segment");
        // sealed: base64 of the answer's bytes and a little more
        assertThat(stored).as("characters stored for the journal").isBetween(bytes * 4L / 3, bytes * 4L / 3 + 64 * 1024);
        stopAll();
        byte[] file = Files.readAllBytes(dataDir.resolve("store").resolve("tether.mv.db"));
        assertThat(indexOf(file, marker.getBytes(StandardCharsets.UTF_8))).as("the code in the database file").isNegative();
        assertThat(indexOf(file, "x".repeat(4096).getBytes(StandardCharsets.UTF_8))).as("the answer in the database file").isNegative();

        start();
        JsonNode done = resume(client(), id, "accept");
        assertThat(done.path("structured").path("result").asString()).as(done.toString()).isEqualTo(bytes + ":" + marker.length());
    }

    /**
     * An agent on {@code /mcp?elicitation_mode=browser} whose session ended with the daemon: a new session's
     * {@code resume} takes the execution on and gives the approval page anew, naming the new session; the user approves
     * there, and the next {@code resume} completes it.
     */
    @Test
    void aBrowserAgentsPauseIsApprovedOnTheApprovalPageOfItsNewSession() throws Exception {
        Path calls = dataDir.resolve("calls.jsonl");
        TetherClient before = start();
        String tools = "tools." + before.registerAndSync("fx", Fixture.command("--calls=" + calls)) + ".org.default";
        DurableRuns.Agent agent = new DurableRuns.Agent(before.baseUrl() + "/mcp?elicitation_mode=browser", DataDirs.token(dataDir));
        String old = agent.initialize();
        JsonNode paused = agent.call(old, "execute", Map.of("code", "return await " + tools + ".delete_everything({})"));
        String id = paused.at("/result/structuredContent/executionId").asString();
        assertThat(paused.at("/result/structuredContent/status").asString()).as(paused.toString()).isEqualTo("user_approval_required");

        restart();
        agent = new DurableRuns.Agent(client().baseUrl() + "/mcp?elicitation_mode=browser", DataDirs.token(dataDir));
        assertThat(agent.send(old, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}").statusCode()).as("the old session").isEqualTo(404);
        String session = agent.initialize();
        JsonNode taken = agent.call(session, "resume", Map.of("executionId", id));
        assertThat(taken.at("/result/structuredContent/status").asString()).as(taken.toString()).isEqualTo("user_approval_required");
        assertThat(taken.at("/result/structuredContent/approvalUrl").asString()).endsWith("/resume/" + id + "?mcp_session_id=" + session);
        Reply approved = client().post("/api/mcp-sessions/" + session + "/executions/" + id + "/resume", Map.of("action", "accept"));
        assertThat(approved.status()).as(approved.toString()).isEqualTo(200);
        JsonNode done = agent.call(session, "resume", Map.of("executionId", id));
        assertThat(done.at("/result/structuredContent/status").asString()).as(done.toString()).isEqualTo("completed");
        assertThat(DurableRuns.received(calls)).containsExactly("delete_everything");
    }

    @Test
    void aPauseOnAServersQuestionEndsWithWhyAfterARestart() {
        TetherClient before = start();
        String tools = "tools." + before.registerAndSync("everything", Fixture.everythingCommand()) + ".org.default";
        String id = paused(before, "return await " + tools + ".trigger_elicitation_request({})").path("structured")
                .path("executionId").asString();

        restart();
        assertThat(client().get("/api/executions/" + id).status()).isEqualTo(200);
        JsonNode done = resume(client(), id, "decline");
        assertThat(done.path("isError").asBoolean()).as(done.toString()).isTrue();
        assertThat(done.path("structured").path("error").asString()).contains("was waiting for the answer to its server's question")
                .contains("it is not sent again");
        assertThat(journals()).isZero();
    }

    /**
     * Journals are bounded: one past {@code max-journal} is not stored (its pause holds in memory, resumed there as
     * before), and one past its expiry is neither shown nor resumed, and goes at the next sweep.
     */
    @Test
    void aJournalPastItsBoundIsNotStoredAndOnePastItsExpiryIsGone() throws IOException {
        TetherClient tether = start("--tether.execution.max-journal=4KB");
        String tools = "tools." + tether.registerAndSync("fx", Fixture.command("--big-tool")) + ".org.default";
        String big = paused(tether, "await " + tools + ".big({bytes: 8192}); return await " + tools + ".delete_everything({})")
                .path("structured").path("executionId").asString();
        assertThat(journals()).as("past the bound: nothing stored").isZero();
        assertThat(resume(tether, big, "accept").path("status").asString()).as("resumed on its live context").isEqualTo("completed");

        String small = paused(tether, "return await " + tools + ".delete_everything({})").path("structured").path("executionId").asString();
        ExecutionJournals journals = daemons.get(0).getBean(ExecutionJournals.class);
        StoredJournal row = journals.find(small, Principal.DAEMON).block();
        List<String> segments = journals.segments(row.journalId()).collectList().block();
        // the same journal, as if it had waited past its expiry
        journals.remove(row.journalId(), row.version()).block();
        long expired = System.currentTimeMillis() - 1;
        journals.create(new PauseWrite(row.journalId(), "exec_expired", row.holder(), row.pause(), 0, segments.get(0), row.bytes(),
                expired), row.code(), row.origin(), LOCAL).block();
        assertThat(tether.get("/api/executions/exec_expired").status()).isEqualTo(404);
        assertThat(tether.post("/api/executions/exec_expired/resume", Map.of("action", "accept")).status()).isEqualTo(404);
        assertThat(journals.removeExpired(System.currentTimeMillis()).block()).isEqualTo(1);
        assertThat(journals()).isZero();
    }

    @Test
    void withDurabilityOffNothingIsStoredAndAPauseEndsWithItsDaemon() throws IOException {
        Path calls = dataDir.resolve("calls.jsonl");
        TetherClient before = start("--tether.execution.durable=false");
        String tools = "tools." + before.registerAndSync("fx", Fixture.command("--calls=" + calls)) + ".org.default";
        String id = paused(before, "return await " + tools + ".delete_everything({})").path("structured").path("executionId").asString();
        assertThat(journals()).isZero();

        restart("--tether.execution.durable=false");
        assertThat(client().get("/api/executions/" + id).status()).isEqualTo(404);
        assertThat(client().post("/api/executions/" + id + "/resume", Map.of("action", "accept")).status()).isEqualTo(404);
        assertThat(DurableRuns.received(calls)).isEmpty();
    }

    // ---- helpers ---------------------------------------------------------------------------------

    private TetherClient start(String... settings) {
        daemons.add(Daemons.start(dataDir, settings));
        return client();
    }

    private void restart(String... settings) {
        stopAll();
        start(settings);
    }

    private void stopAll() {
        daemons.forEach(ConfigurableApplicationContext::close);
        daemons.clear();
    }

    private TetherClient client() {
        return new TetherClient(Daemons.port(daemons.get(daemons.size() - 1)), DataDirs.token(dataDir));
    }

    private static JsonNode paused(TetherClient tether, String code) {
        Reply reply = tether.post("/api/executions", Map.of("code", code));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        assertThat(reply.json().path("status").asString()).as(reply.toString()).isEqualTo("paused");
        return reply.json();
    }

    private static JsonNode resume(TetherClient tether, String id, String action) {
        Reply reply = tether.post("/api/executions/" + id + "/resume", Map.of("action", action));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply.json();
    }

    /** Journals in the store now. */
    private long journals() {
        return sql("SELECT COUNT(*) AS n FROM execution_journal");
    }

    /** One number the running daemon's store answers, through its own connections. */
    private long sql(String query) {
        Number n = daemons.get(daemons.size() - 1).getBean(DatabaseClient.class).sql(query)
                .map(row -> row.get("n", Number.class)).one().block();
        return n == null ? 0 : n.longValue();
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
