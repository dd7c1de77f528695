package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.client.WebClient;

import tools.jackson.databind.JsonNode;

import dev.tether.TetherApplication;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.GracefulDrain;
import dev.tether.replicas.PeerCredentials;
import dev.tether.replicas.forwarding.PeerExchange;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.Fixture.RefusingPort;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.Replicas;
import dev.tether.testsupport.RequiresPostgres;

/**
 * Two daemons on one PostgreSQL, as replicas behind a load balancer: each holds the store in memory, and each
 * follows what the other writes (integrations, connections, verdicts, deletions) through the change log; each
 * connection's requests are served by its owner replica, whichever replica is asked.
 */
@InProcess
@RequiresPostgres
class ReplicasTest {

    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final String TOKEN = "replicas-test-token";

    @TempDir
    Path dir;

    private final List<ConfigurableApplicationContext> replicas = new ArrayList<>();
    private final List<RefusingPort> ports = new ArrayList<>();

    @AfterEach
    void stopReplicas() {
        Replicas.closeAll(replicas);
        ports.forEach(RefusingPort::close);
    }

    @Test
    void eachReplicaFollowsWhatTheOtherWrites() {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("replicas");
        TetherClient a = start(postgres, schema, dir.resolve("a"));
        TetherClient b = start(postgres, schema, dir.resolve("b"));
        assertThat(b.get("/api/integrations").json().size()).as("b has loaded the empty store: only the built-in").isEqualTo(1);

        String slug = a.register("shared", Fixture.command());
        await().atMost(BOUND).untilAsserted(() -> assertThat(b.get("/api/integrations").json().size()).isEqualTo(2));
        assertThat(b.get("/api/connections/org/" + slug + "/default").status()).isEqualTo(200);

        assertThat(a.post(TetherClient.healthPath(slug, "default"), null).json().path("status").asString()).isEqualTo("healthy");
        await().atMost(BOUND).untilAsserted(() -> assertThat(b.get("/api/connections/org/" + slug + "/default").json()
                .path("lastHealth").path("status").asString()).isEqualTo("healthy"));

        assertThat(a.delete("/api/mcp/servers/" + slug).status()).isEqualTo(200);
        await().atMost(BOUND).untilAsserted(() -> assertThat(b.get("/api/integrations").json().size()).isEqualTo(1));
        assertThat(b.get("/api/connections").json().size()).isZero();
    }

    /**
     * A connection owned by B, asked through A: A forwards the sync, the check and the call, so only B spawns its
     * child; a call whose client leaves is cancelled on B's child too ({@code notifications/cancelled}); and a request
     * already forwarded once is served where it lands, never passed on again.
     */
    @Test
    void aConnectionsRequestsReachItsOwnerWhicheverReplicaIsAsked() throws Exception {
        List<TetherClient> ab = twoLiveReplicas("owners");
        TetherClient a = ab.get(0);
        TetherClient b = ab.get(1);
        ConnectionOwners ownersA = owners(0);
        String instanceB = owners(1).instance();
        Path record = dir.resolve("record.txt");
        String slug = registerOwnedBy(a, instanceB, ownersA, Fixture.command("--record=" + record));

        assertThat(a.post("/api/connections/org/" + slug + "/default/refresh", null).status()).isEqualTo(200);
        assertThat(a.post(TetherClient.healthPath(slug, "default"), null).json().path("status").asString()).isEqualTo("healthy");
        assertThat(a.post("/api/tools/call", Map.of("address", "tools." + slug + ".org.default.echo", "args", Map.of("text", "hi")))
                .body()).contains("hi");
        assertThat(spawned(0)).as("children A spawned").isZero();
        assertThat(spawned(1)).as("children B spawned").isEqualTo(1);

        a.exchange(HttpMethod.POST, "/api/tools/call", Map.of("address", "tools." + slug + ".org.default.hang", "args", Map.of()))
                .take(Duration.ofMillis(500)).block(BOUND);
        await().atMost(BOUND).until(() -> Files.readString(record).contains("notifications/cancelled"));
        assertThat(b.post(TetherClient.healthPath(slug, "default"), null).status()).as("B's session stays warm").isEqualTo(200);
        assertThat(spawned(1)).isEqualTo(1);

        HttpResponse<String> forwarded = HttpClient.newHttpClient().send(asPeer(0, instanceB, "POST",
                        a.baseUrl(), TetherClient.healthPath(slug, "default"), "0")
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(forwarded.statusCode()).isEqualTo(200);
        assertThat(spawned(0)).as("a request already forwarded is served where it lands").isEqualTo(1);
    }

    /**
     * Work that starts a child, asked of A for a connection B owns on routes that are not passed to B whole: a listing
     * of tools whose catalog was never synced, the server's {@code list_changed} (B syncs on its session at once), a
     * listing whose catalog A holds past A's TTL, and a batch health check. B does each on its one child, A starts none.
     */
    @Test
    void catalogSyncsAndBatchChecksOfAPeersConnectionRunOnItsOwner() throws Exception {
        TetherClient a = twoLiveReplicas("syncs", "--tether.catalog.ttl=1s").get(0);
        ConnectionOwners ownersA = owners(0);
        String instanceB = owners(1).instance();
        Path record = dir.resolve("record.txt");
        String slug = registerOwnedBy(a, instanceB, ownersA, Fixture.command("--record=" + record, "--list-changed-after=2000"));
        String listing = "/api/tools?integration=" + slug;

        await().atMost(BOUND).untilAsserted(() -> assertThat(a.get(listing).body()).as("never synced, listed through A")
                .contains("tools." + slug + ".org.default.tool_1"));
        assertThat(spawned(0)).as("children A spawned").isZero();
        assertThat(spawned(1)).as("children B spawned").isEqualTo(1);

        await().atMost(BOUND).until(() -> listings(record) >= 2);
        assertThat(spawned(1)).as("list_changed synced on B's session").isEqualTo(1);

        long before = listings(record);
        await().atMost(BOUND).until(() -> a.get(listing).status() == 200 && listings(record) > before);
        assertThat(spawned(0)).as("children A spawned for a catalog past its TTL").isZero();

        TetherClient.Reply checked = a.post("/api/connections/health", Map.of("integration", slug));
        assertThat(checked.status()).as(checked.toString()).isEqualTo(200);
        assertThat(checked.json().size()).isEqualTo(1);
        assertThat(checked.json().get(0).path("health").path("status").asString()).as(checked.toString()).isEqualTo("healthy");
        assertThat(Files.readAllLines(record)).contains("ping");
        assertThat(spawned(0)).as("children A spawned for a batch check").isZero();
        assertThat(spawned(1)).as("children B spawned").isEqualTo(1);
    }

    private static long listings(Path record) throws IOException {
        return Files.exists(record) ? Files.readAllLines(record).stream().filter("tools/list"::equals).count() : 0;
    }

    /**
     * An execution on A calls a tool of a connection B owns: the call goes to B, whose warm child answers, and A
     * starts no child. A call that needs approval pauses on A, as A's policies say, and goes to B once accepted; a call
     * that A's execution gives up on (its run times out) is cancelled on B's child too.
     */
    @Test
    void anExecutionsAndAnAgentsToolCallsReachTheConnectionsOwner() throws Exception {
        TetherClient a = twoLiveReplicas("owners", "--tether.execution.timeout=3s").get(0);
        ConnectionOwners ownersA = owners(0);
        String instanceB = owners(1).instance();
        Path record = dir.resolve("record.txt");
        String slug = registerOwnedBy(a, instanceB, ownersA, Fixture.command("--record=" + record));
        assertThat(a.post("/api/connections/org/" + slug + "/default/refresh", null).status()).isEqualTo(200);

        TetherClient.Reply ran = a.post("/api/executions", Map.of("code",
                "return await tools." + slug + ".org.default.echo({text: 'from A'})"));
        assertThat(ran.json().path("status").asString()).as(ran.toString()).isEqualTo("completed");
        assertThat(ran.body()).as(ran.toString()).contains("from A");
        assertThat(spawned(0)).as("children A spawned").isZero();
        assertThat(spawned(1)).as("children B spawned").isEqualTo(1);

        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> opened = http.send(mcp(a, "/mcp/tools", null).POST(HttpRequest.BodyPublishers.ofString(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                        + "\"capabilities\":{},\"clientInfo\":{\"name\":\"replicas-test\",\"version\":\"1\"}}}")).build(),
                HttpResponse.BodyHandlers.ofString());
        String session = opened.headers().firstValue("Mcp-Session-Id").orElse(null);
        HttpResponse<String> called = http.send(mcp(a, "/mcp/tools", session).POST(HttpRequest.BodyPublishers.ofString(
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"tools." + slug
                        + ".org.default.echo\",\"arguments\":{\"text\":\"from /mcp on A\"}}}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(called.body()).as("an agent's tools/call on A's /mcp/tools").contains("from /mcp on A");
        assertThat(spawned(0)).as("children A spawned").isZero();

        assertThat(a.post("/api/policies", Map.of("owner", "org", "pattern", slug + ".org.default.echo", "action",
                "require_approval")).status()).isEqualTo(200);
        TetherClient.Reply paused = a.post("/api/executions", Map.of("code",
                "return await tools." + slug + ".org.default.echo({text: 'approved on A'})"));
        assertThat(paused.json().path("status").asString()).as(paused.toString()).isEqualTo("paused");
        assertThat(Files.readString(record)).as("nothing reached B before the approval").doesNotContain("approved on A");
        String id = paused.json().path("structured").path("executionId").asString();
        TetherClient.Reply resumed = a.post("/api/executions/" + id + "/resume", Map.of("action", "accept"));
        assertThat(resumed.body()).as(resumed.toString()).contains("approved on A");

        TetherClient.Reply abandoned = a.post("/api/executions", Map.of("code",
                "return await tools." + slug + ".org.default.hang({})"));
        assertThat(abandoned.body()).as(abandoned.toString()).containsIgnoringCase("timed out");
        await().atMost(BOUND).until(() -> Files.readString(record).contains("notifications/cancelled"));
        assertThat(spawned(0)).as("children A spawned").isZero();
        assertThat(spawned(1)).as("B's session stays warm").isEqualTo(1);
    }

    /**
     * A UI listening to B's health events hears the verdicts of checks that ran on A, as it hears B's own: the verdict
     * is written behind on A, announced, and read by B.
     */
    @Test
    void aUiListeningToOneReplicaHearsTheVerdictsOfChecksOnAnother() throws Exception {
        List<TetherClient> ab = twoLiveReplicas("events");
        TetherClient a = ab.get(0);
        String slug = registerOwnedBy(a, owners(0).instance(), owners(0), Fixture.command());
        CompletableFuture<String> heard = WebClient.create(ab.get(1).baseUrl()).get().uri("/api/connections/health/events")
                .header("Authorization", "Bearer " + TOKEN).accept(MediaType.TEXT_EVENT_STREAM)
                .retrieve().bodyToFlux(new ParameterizedTypeReference<ServerSentEvent<String>>() {
                })
                .filter(event -> "health".equals(event.event()) && event.data() != null && event.data().contains(slug))
                .map(ServerSentEvent::data)
                .next().toFuture();
        try {
            // Checked until B hears one: the first check may come before B's stream is open.
            await().atMost(BOUND).until(() -> {
                assertThat(a.post(TetherClient.healthPath(slug, "default"), null).status()).isEqualTo(200);
                return heard.isDone() || doneWithin(heard, Duration.ofSeconds(2));
            });
            assertThat(heard.get()).contains("\"integration\":\"" + slug + "\"", "\"status\":\"healthy\"");
            assertThat(spawned(1)).as("children B spawned: it only heard").isZero();
        }
        finally {
            heard.cancel(true);
        }
    }

    private static boolean doneWithin(CompletableFuture<?> future, Duration wait) throws InterruptedException {
        try {
            future.get(wait.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        }
        catch (TimeoutException | ExecutionException notYet) {
            return false;
        }
    }

    /**
     * A call at the connection's owner says on the way what a local call says: an agent's {@code tools/call} through
     * A's {@code /mcp/tools} gets the progress of B's child under its own token, and an execution on A whose tool
     * asks a question (server-everything's elicitation) pauses on A, and the content its resume gives reaches B's child.
     */
    @Test
    void aCallAtTheOwnerCarriesItsProgressAndItsQuestionsBack() throws Exception {
        TetherClient a = twoLiveReplicas("asked").get(0);
        String slug = registerOwnedBy(a, owners(1).instance(), owners(0), Fixture.everythingCommand());
        assertThat(a.post("/api/connections/org/" + slug + "/default/refresh", null).status()).isEqualTo(200);

        HttpResponse<String> streamed = HttpClient.newHttpClient().send(mcp(a, "/mcp/tools", null).POST(HttpRequest.BodyPublishers.ofString(
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"tools." + slug
                        + ".org.default.trigger_long_running_operation\",\"arguments\":{\"duration\":0.6,\"steps\":3},"
                        + "\"_meta\":{\"progressToken\":\"agent-7\"}}}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(streamed.body().split("notifications/progress", -1)).as(streamed.body()).hasSize(4);
        assertThat(streamed.body()).contains("\"progressToken\":\"agent-7\"", "\"id\":7");

        TetherClient.Reply paused = a.post("/api/executions", Map.of("code",
                "return await tools." + slug + ".org.default.trigger_elicitation_request({})"));
        assertThat(paused.json().path("status").asString()).as(paused.toString()).isEqualTo("paused");
        assertThat(paused.json().at("/structured/interaction/kind").asString()).isEqualTo("form");
        assertThat(paused.json().at("/structured/interaction/requestedSchema/required/0").asString()).isEqualTo("name");
        String id = paused.json().path("structured").path("executionId").asString();
        TetherClient.Reply done = a.post("/api/executions/" + id + "/resume", Map.of("action", "accept", "content",
                Map.of("name", "Ada", "check", true)));
        assertThat(done.json().path("status").asString()).as(done.toString()).isEqualTo("completed");
        assertThat(done.body()).contains("- Name: Ada", "- Agreed to terms: true");
        assertThat(spawned(0)).as("children A spawned").isZero();
        assertThat(spawned(1)).as("children B spawned").isEqualTo(1);
    }

    /**
     * A request a peer passed here names how far into the change log the peer had gone, and is served once this
     * replica has read that far: a change written without announcing it (so this replica would not look for it) is
     * known by the time the request is served.
     */
    @Test
    void aForwardedRequestIsServedOnceTheStoreIsReadAsFarAsItsSenderHadGone() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("position");
        TetherClient a = start(postgres, schema, dir.resolve("a"));
        String slug = a.post("/api/mcp/servers", Map.of("transport", "stdio", "name", "As registered", "slug", "renamed",
                "command", Fixture.command().get(0), "args", Fixture.command().subList(1, Fixture.command().size())))
                .json().path("slug").asString();
        long position;
        try (Connection db = DriverManager.getConnection(postgres.jdbcUrl(schema), postgres.user(), postgres.password())) {
            db.createStatement().execute("UPDATE integration SET description = 'As a peer renamed it' WHERE slug = '" + slug + "'");
            var added = db.createStatement().executeQuery("INSERT INTO store_change (kind, item, origin, changed_at) VALUES"
                    + " ('integration', '" + slug + "', 'a-peer', " + System.currentTimeMillis() + ") RETURNING seq");
            added.next();
            position = added.getLong(1);
        }

        HttpResponse<String> read = HttpClient.newHttpClient().send(asPeer(0, "a-peer", "GET", a.baseUrl(),
                "/api/integrations/" + slug, Long.toString(position)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
        assertThat(read.body()).contains("As a peer renamed it");
    }

    /**
     * Two replicas as the documentation leaves them: {@code tether.replicas.address} unset, so each lease names the host
     * name, which resolves to loopback here (as {@code /etc/hosts} has it on most hosts); no allowed hosts; one store
     * key and one token, as replicas need. A check asked of A for a connection B owns reaches B with {@code Host:
     * <hostname>:<port>}, which B refuses from a browser (the DNS-rebinding guard), and B answers it: a peer is
     * authenticated as a peer.
     */
    @Test
    void aRequestForwardedWithTheDocumentedDefaultsIsAnsweredByItsOwner() throws Exception {
        String hostName = InetAddress.getLocalHost().getHostName();
        assertThat(InetAddress.getByName(hostName).getHostAddress()).as("the host name %s resolves where the daemons listen by"
                + " default (127.0.0.1), or the documented defaults cannot reach a peer at all", hostName).isEqualTo("127.0.0.1");
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("defaults");
        TetherClient a = launch(storeArguments(postgres, schema, dir.resolve("a")));
        TetherClient b = launch(storeArguments(postgres, schema, dir.resolve("b")));
        await().atMost(BOUND).until(() -> live(0) == 2 && live(1) == 2);
        String instanceB = owners(1).instance();
        String slug = registerOwnedBy(a, instanceB, owners(0), Fixture.command());
        String leaseOfB = owners(0).peer(instanceB).orElseThrow().address();
        assertThat(leaseOfB).as("B's lease names the host name").isEqualTo(hostName + ":" + b.baseUrl().substring(b.baseUrl().lastIndexOf(':') + 1));

        HttpResponse<String> asBrowser = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://" + leaseOfB
                + "/api/health")).timeout(BOUND).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(asBrowser.statusCode()).as("B refuses the name from anyone but a peer: " + asBrowser.body()).isEqualTo(403);
        assertThat(asBrowser.body()).contains("HostNotAllowedError");

        double answeredBefore = forwarded(0, "answered");
        TetherClient.Reply checked = a.post(TetherClient.healthPath(slug, "default"), null);
        assertThat(checked.status()).as(checked.toString()).isEqualTo(200);
        assertThat(checked.json().path("status").asString()).as(checked.toString()).isEqualTo("healthy");
        assertThat(forwarded(0, "answered") - answeredBefore).as("forwarded by A and answered").isEqualTo(1);
        assertThat(spawned(0)).as("children A spawned").isZero();
        assertThat(spawned(1)).as("children B spawned: B answered").isEqualTo(1);
        assertThat(a.post("/api/tools/call", Map.of("address", "tools." + slug + ".org.default.echo", "args", Map.of("text", "via A")))
                .body()).contains("via A");
        assertThat(spawned(1)).as("B's warm child answered the call too").isEqualTo(1);
    }

    /**
     * What a page or a client cannot do: pass for a peer. A request with a peer's marks and no credential, a forged one,
     * one signed for another request or one used before is refused (401, before any route runs), and the routes only
     * peers call answer a client with the token 403.
     */
    @Test
    void nothingButAPeerPassesForOne() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("forged");
        TetherClient a = start(postgres, schema, dir.resolve("a"));
        String slug = a.register("forged", Fixture.command());
        String path = TetherClient.healthPath(slug, "default");
        HttpClient http = HttpClient.newHttpClient();

        HttpResponse<String> unsigned = http.send(HttpRequest.newBuilder(URI.create(a.baseUrl() + path)).timeout(BOUND)
                .header(PeerExchange.FORWARDED, "a-peer").POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(unsigned.statusCode()).as(unsigned.body()).isEqualTo(401);
        String signed = asPeer(0, "a-peer", "POST", a.baseUrl(), path, "0").build().headers()
                .firstValue(PeerExchange.CREDENTIAL).orElseThrow();
        String forged = signed.substring(0, signed.lastIndexOf('.') + 1) + "A".repeat(43);
        HttpResponse<String> forgedAnswer = http.send(HttpRequest.newBuilder(URI.create(a.baseUrl() + path)).timeout(BOUND)
                .header(PeerExchange.FORWARDED, "a-peer").header(PeerExchange.STORE_POSITION, "0")
                .header(PeerExchange.CREDENTIAL, forged).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(forgedAnswer.statusCode()).as(forgedAnswer.body()).isEqualTo(401);
        assertThat(forgedAnswer.body()).contains("does not verify");
        HttpResponse<String> elsewhere = http.send(HttpRequest.newBuilder(URI.create(a.baseUrl() + "/api/connections")).timeout(BOUND)
                .header(PeerExchange.FORWARDED, "a-peer").header(PeerExchange.STORE_POSITION, "0")
                .header(PeerExchange.CREDENTIAL, signed).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(elsewhere.statusCode()).as("signed for another request: " + elsewhere.body()).isEqualTo(401);

        HttpRequest once = asPeer(0, "a-peer", "POST", a.baseUrl(), path, "0").POST(HttpRequest.BodyPublishers.noBody()).build();
        assertThat(http.send(once, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        HttpResponse<String> replayed = http.send(once, HttpResponse.BodyHandlers.ofString());
        assertThat(replayed.statusCode()).as(replayed.body()).isEqualTo(401);
        assertThat(replayed.body()).contains("used before");

        TetherClient.Reply client = a.post("/api/replicas/calls", Map.of("address", "tools." + slug + ".org.default.echo",
                "args", Map.of("text", "not a peer"), "progress", false, "questions", false));
        assertThat(client.status()).as(client.toString()).isEqualTo(403);
        assertThat(client.json().path("_tag").asString()).isEqualTo("PeerOnlyError");
    }

    /** An owner whose lease is alive but who does not answer: a clear 503 naming it, until its lease runs out. */
    @Test
    void anOwnerThatDoesNotAnswerFailsClearlyUntilItsLeaseRunsOut() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("owners");
        TetherClient a = start(postgres, schema, dir.resolve("a"));
        RefusingPort silent = Fixture.refusingLoopbackPort();
        ports.add(silent);
        long now = System.currentTimeMillis();
        try (Connection db = DriverManager.getConnection(postgres.jdbcUrl(schema), postgres.user(), postgres.password())) {
            db.createStatement().execute("INSERT INTO instance_lease (instance_id, address, started_at, expires_at) VALUES"
                    + " ('ghost001', '127.0.0.1:" + silent.socket().getLocalPort() + "', " + now + ", " + (now + 4000) + ")");
        }
        ConnectionOwners ownersA = owners(0);
        await().atMost(BOUND).until(() -> live(0) == 2);
        String slug = registerOwnedBy(a, "ghost001", ownersA, Fixture.command());

        TetherClient.Reply refused = a.post(TetherClient.healthPath(slug, "default"), null);
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.json().path("_tag").asString()).isEqualTo("ReplicaUnreachableError");
        assertThat(refused.json().path("message").asString()).contains("ghost001", "127.0.0.1:" + silent.socket().getLocalPort());

        await().atMost(BOUND).untilAsserted(() -> assertThat(a.post(TetherClient.healthPath(slug, "default"), null)
                .json().path("status").asString()).as("served here once the ghost's lease ran out").isEqualTo("healthy"));
    }

    /**
     * A replica whose lease ran out but that answers at its address (its renewals late: starved of CPU, its store
     * queued) is slow, not dead: the peer asks it at {@code GET /api/replicas/alive} with the shared token, takes nothing
     * of it, and keeps passing its connection's requests to it, where they are served.
     */
    @Test
    void aReplicaWhoseLeaseRanOutButThatAnswersIsSlowNotDead() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("slow");
        TetherClient a = start(postgres, schema, dir.resolve("a"));
        // B renews every 20 s, so that its lease stays as the test sets it below for long enough. On a port of its own
        // choosing (0) its first renewal could come before the server has bound one, and A would see it only after the
        // second, 20 s on; on a port given, as in production, its first renewal already names where it answers.
        start(postgres, schema, dir.resolve("b"), "--server.port=" + Fixture.freeLoopbackPort(),
                "--tether.replicas.lease-ttl=60s", "--tether.replicas.heartbeat=20s");
        await().atMost(BOUND.multipliedBy(2)).until(() -> live(0) == 2);
        String instanceB = owners(1).instance();
        String slug = registerOwnedBy(a, instanceB, owners(0), Fixture.command());
        try (Connection db = DriverManager.getConnection(postgres.jdbcUrl(schema), postgres.user(), postgres.password())) {
            db.createStatement().execute("UPDATE instance_lease SET expires_at = " + (System.currentTimeMillis() - 1000)
                    + " WHERE instance_id = '" + instanceB + "'");
        }

        await().atMost(BOUND).until(() -> probes(0, "answered") >= 1);
        assertThat(probes(0, "silent")).isZero();
        assertThat(owners(0).remoteOwner(ConnectionKey.org(slug, "default")).map(ConnectionOwners.Peer::instance))
                .as("B keeps its connection").contains(instanceB);
        assertThat(a.post(TetherClient.healthPath(slug, "default"), null).json().path("status").asString()).isEqualTo("healthy");
        assertThat(spawned(0)).as("children A spawned").isZero();
        assertThat(spawned(1)).as("children B spawned").isEqualTo(1);
        try (Connection db = DriverManager.getConnection(postgres.jdbcUrl(schema), postgres.user(), postgres.password());
                var claimed = db.createStatement().executeQuery("SELECT claimed_by FROM instance_lease WHERE instance_id = '"
                        + instanceB + "'")) {
            assertThat(claimed.next()).isTrue();
            assertThat(claimed.getString(1)).as("B's lease, taken by nobody").isNull();
        }
    }

    /**
     * A replica that finds its lease taken (a peer took it for dead: here the peer's claim is written straight into the
     * store, as after a freeze) ends its children before it writes its lease anew and serves again; the next request
     * for its connection starts a new child.
     */
    @Test
    void aReplicaThatFindsItsLeaseTakenEndsItsChildrenBeforeItServesAgain() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("taken");
        TetherClient a = start(postgres, schema, dir.resolve("a"));
        await().atMost(BOUND).until(() -> live(0) == 1);
        String slug = a.register("taken", Fixture.command());
        assertThat(a.post(TetherClient.healthPath(slug, "default"), null).json().path("status").asString()).isEqualTo("healthy");
        assertThat(liveChildren(0)).isEqualTo(1);
        String instance = owners(0).instance();

        try (Connection db = DriverManager.getConnection(postgres.jdbcUrl(schema), postgres.user(), postgres.password())) {
            db.createStatement().execute("UPDATE instance_lease SET claimed_by = 'peer0001', claimed_until = "
                    + (System.currentTimeMillis() + 60_000) + " WHERE instance_id = '" + instance + "'");
        }

        await().atMost(BOUND).until(() -> liveChildren(0) == 0);
        await().atMost(BOUND).until(() -> {
            try (Connection db = DriverManager.getConnection(postgres.jdbcUrl(schema), postgres.user(), postgres.password());
                    var row = db.createStatement().executeQuery("SELECT claimed_by FROM instance_lease WHERE instance_id = '"
                            + instance + "'")) {
                return row.next() && row.getString(1) == null;
            }
        });
        assertThat(a.post(TetherClient.healthPath(slug, "default"), null).json().path("status").asString()).isEqualTo("healthy");
        assertThat(spawned(0)).as("a new child, once the old one was gone").isEqualTo(2);
    }

    /**
     * A warm session on a replica that does not own its connection (a forwarded request is served where it lands, as
     * when a replica stood in for a stopped owner, or a request chose this replica just before a read of the leases) is
     * retired, idle, at this replica's next read of the leases, though they did not change: otherwise the owner's fence
     * would wait for its container until it idled out.
     */
    @Test
    void anIdleSessionOfAConnectionAnotherReplicaOwnsIsRetiredAtTheNextReadOfTheLeases() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("moved");
        TetherClient a = start(postgres, schema, dir.resolve("a"));
        start(postgres, schema, dir.resolve("b"));
        await().atMost(BOUND).until(() -> live(0) == 2 && live(1) == 2);
        ConnectionOwners ownersA = owners(0);
        String instanceB = owners(1).instance();
        String slug = registerOwnedBy(a, instanceB, ownersA, Fixture.command());
        HttpResponse<String> servedOnA = HttpClient.newHttpClient().send(asPeer(0, instanceB, "POST", a.baseUrl(),
                TetherClient.healthPath(slug, "default"), "0").POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(servedOnA.statusCode()).isEqualTo(200);
        assertThat(spawned(0)).as("A's stand-in session started a child").isEqualTo(1);

        await().atMost(BOUND).until(() -> liveChildren(0) == 0);
        assertThat(live(0)).as("the leases did not change meanwhile").isEqualTo(2);
        assertThat(liveChildren(1)).isZero();
    }

    /**
     * The owner of a connection is draining and refuses what is forwarded to it as owner, as a replica told to stop
     * does: it marks its lease first, then answers 503 with {@code X-Tether-Draining}. A health check and an
     * execution's tool call asked through A are each refused once, and A, reading the leases again, finds itself the
     * owner now and serves them; the owner is asked once per request, never twice. In between, drain001 owns the
     * connection again, and A retires its idle session of it.
     */
    @Test
    void aForwardThatADrainingOwnerRefusesIsServedByTheNewOwner() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("draining");
        AtomicInteger refused = new AtomicInteger();
        HttpServer draining = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        draining.createContext("/", exchange -> {
            try (Connection db = DriverManager.getConnection(postgres.jdbcUrl(schema), postgres.user(), postgres.password())) {
                db.createStatement().execute("UPDATE instance_lease SET draining = TRUE WHERE instance_id = 'drain001'");
            }
            catch (SQLException ex) {
                throw new IOException(ex);
            }
            refused.incrementAndGet();
            exchange.getRequestBody().readAllBytes();
            exchange.getResponseHeaders().add("X-Tether-Draining", "drain001");
            exchange.sendResponseHeaders(503, -1);
            exchange.close();
        });
        draining.start();
        try {
            TetherClient a = start(postgres, schema, dir.resolve("a"));
            long now = System.currentTimeMillis();
            try (Connection db = DriverManager.getConnection(postgres.jdbcUrl(schema), postgres.user(), postgres.password())) {
                db.createStatement().execute("INSERT INTO instance_lease (instance_id, address, started_at, expires_at) VALUES"
                        + " ('drain001', '127.0.0.1:" + draining.getAddress().getPort() + "', " + now + ", " + (now + 600_000) + ")");
            }
            ConnectionOwners ownersA = owners(0);
            await().atMost(BOUND).until(() -> live(0) == 2);
            String slug = registerOwnedBy(a, "drain001", ownersA, Fixture.command());

            TetherClient.Reply checked = a.post(TetherClient.healthPath(slug, "default"), null);
            assertThat(checked.json().path("status").asString()).as(checked.toString()).isEqualTo("healthy");
            assertThat(refused.get()).as("requests the draining owner refused").isEqualTo(1);
            assertThat(forwarded(0, "owner_left")).isEqualTo(1);

            try (Connection db = DriverManager.getConnection(postgres.jdbcUrl(schema), postgres.user(), postgres.password())) {
                db.createStatement().execute("UPDATE instance_lease SET draining = FALSE WHERE instance_id = 'drain001'");
            }
            ConnectionKey key = ConnectionKey.org(slug, "default");
            await().atMost(BOUND).until(() -> ownersA.remoteOwner(key).isPresent());
            TetherClient.Reply ran = a.post("/api/executions", Map.of("code",
                    "return await tools." + slug + ".org.default.echo({text: 'handed over'})"));
            assertThat(ran.json().path("status").asString()).as(ran.toString()).isEqualTo("completed");
            assertThat(ran.body()).contains("handed over");
            assertThat(refused.get()).as("requests the draining owner refused").isEqualTo(2);
            assertThat(forwarded(0, "owner_left")).isEqualTo(2);
            assertThat(spawned(0)).as("A's session, retired idle when drain001 owned the connection again, then started anew")
                    .isEqualTo(2);
        }
        finally {
            draining.stop(0);
        }
    }

    /**
     * A draining replica refuses what a peer still forwards to it as to the owner, and closes the connection after the
     * refusal, so it reads the request's body first: closed under a body still being sent, the peer's client can fail
     * with "prematurely closed BEFORE response" rather than read the refusal, and its caller would get a 503 where the
     * new owner would have served it (RollingRestartIT met that). Here half the body is sent, and nothing may be
     * answered until the rest is.
     */
    @Test
    void aDrainingReplicaReadsAForwardedRequestWholeBeforeItRefusesIt() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        TetherClient a = start(postgres, postgres.createSchema("refusing"), dir.resolve("a"),
                "--tether.replicas.drain-delay=1h", "--spring.lifecycle.timeout-per-shutdown-phase=2s");
        replicas.get(0).getBean(GracefulDrain.class).stop();
        await().atMost(BOUND).until(() -> owners(0).leaving());

        String path = "/api/tools/call";
        byte[] body = "{\"address\":\"tools.gone.org.default.echo\",\"args\":{}}".getBytes(StandardCharsets.UTF_8);
        StringBuilder head = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n");
        asPeer(0, "a-peer", "POST", a.baseUrl(), path, "0").POST(HttpRequest.BodyPublishers.noBody()).build().headers().map()
                .forEach((name, values) -> head.append(name).append(": ").append(values.get(0)).append("\r\n"));
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), URI.create(a.baseUrl()).getPort())) {
            socket.setSoTimeout((int) BOUND.toMillis());
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            out.write(head.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
            out.write(body, 0, body.length / 2);
            out.flush();
            boolean answeredEarly;
            try {
                // A replica that answers without the body does so within milliseconds; one that waits has nothing to say.
                await().atMost(Duration.ofSeconds(2)).until(() -> in.available() > 0);
                answeredEarly = true;
            }
            catch (ConditionTimeoutException waited) {
                answeredEarly = false;
            }
            out.write(body, body.length / 2, body.length - body.length / 2);
            out.flush();
            String answer = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answeredEarly).as("answered before the body was in: " + answer).isFalse();
            assertThat(answer).as(answer).startsWith("HTTP/1.1 503").containsIgnoringCase("X-Tether-Draining: ")
                    .contains("ReplicaDrainingError");
        }
    }

    /**
     * What one replica holds in memory, asked for through the other, as behind a round-robin load balancer: an
     * execution paused on A is read and resumed through B, and an agent's {@code /mcp} session opened on A is used and
     * ended through B. Their ids name A.
     */
    @Test
    void aPausedExecutionAndAnAgentSessionAreReachedThroughEitherReplica() throws Exception {
        List<TetherClient> ab = twoLiveReplicas("homes");
        TetherClient a = ab.get(0);
        TetherClient b = ab.get(1);
        String instanceA = owners(0).instance();
        String slug = a.register("held", Fixture.command());
        assertThat(a.post("/api/policies", Map.of("owner", "org", "pattern", slug + ".org.default.echo", "action",
                "require_approval")).status()).isEqualTo(200);

        TetherClient.Reply paused = a.post("/api/executions", Map.of("code",
                "return await tools." + slug + ".org.default.echo({text: 'held on A'})"));
        assertThat(paused.json().path("status").asString()).as(paused.toString()).isEqualTo("paused");
        String id = paused.json().path("structured").path("executionId").asString();
        assertThat(id).matches("exec_" + instanceA + "_[a-z2-7]{26}");
        assertThat(b.get("/api/executions/" + id).body()).as("read through B").isEqualTo(a.get("/api/executions/" + id).body());

        TetherClient.Reply resumed = b.post("/api/executions/" + id + "/resume", Map.of("action", "accept"));
        assertThat(resumed.status()).as(resumed.toString()).isEqualTo(200);
        assertThat(resumed.body()).contains("held on A");
        assertThat(b.get("/api/executions/" + id).status()).as("gone from A once resumed").isEqualTo(404);

        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> opened = http.send(mcp(a, null).POST(HttpRequest.BodyPublishers.ofString(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                        + "\"capabilities\":{},\"clientInfo\":{\"name\":\"replicas-test\",\"version\":\"1\"}}}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(opened.statusCode()).as(opened.body()).isEqualTo(200);
        String session = opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
        assertThat(session).startsWith(instanceA + ".");
        HttpResponse<String> listed = http.send(mcp(b, session).POST(HttpRequest.BodyPublishers.ofString(
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
        assertThat(listed.body()).contains("\"execute\"", "\"resume\"");
        assertThat(http.send(mcp(b, session).DELETE().build(), HttpResponse.BodyHandlers.ofString()).statusCode())
                .as("ended through B").isEqualTo(200);
        HttpResponse<String> ended = http.send(mcp(a, session).POST(HttpRequest.BodyPublishers.ofString(
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(ended.statusCode()).as("A no longer knows the session").isEqualTo(404);
    }

    /**
     * A request to {@code path} at {@code baseUrl} as peer {@code sender} sends it, with no token: the credential is
     * signed with the key of {@code replica}, which every replica on the store shares.
     */
    private HttpRequest.Builder asPeer(int replica, String sender, String method, String baseUrl, String path, String position) {
        String credential = replicas.get(replica).getBean(PeerCredentials.class)
                .sign(new PeerCredentials.SignedRequest(method, path, sender, position, ""));
        return HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(BOUND)
                .header(PeerExchange.FORWARDED, sender).header(PeerExchange.STORE_POSITION, position)
                .header(PeerExchange.CREDENTIAL, credential);
    }

    /**
     * A paused execution outlives the replica that held it: once A is gone, B shows it and resumes it from its journal,
     * and the approved call reaches the server once. So does an agent over {@code /mcp} whose session was on A: its
     * session is gone with A, and from a new one on B its {@code resume} completes the execution. (One after the other:
     * daemons in one JVM share Reactor Netty's event loops, which closing one ends; {@code DurableExecutionsIT} kills one
     * of two live replicas.)
     */
    @Test
    void aPausedExecutionOutlivesItsReplica() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("durable");
        // Replicas seal with one key, as docs/kubernetes.md has it: a journal is opened by the replica that resumes it.
        String key = "--tether.store.secret-key=" + java.util.Base64.getEncoder().encodeToString(new byte[32]);
        TetherClient a = start(postgres, schema, dir.resolve("a"), key);
        String instanceA = owners(0).instance();
        Path calls = dir.resolve("calls.jsonl");
        String slug = a.registerAndSync("durable", Fixture.command("--calls=" + calls));
        assertThat(a.post("/api/policies", Map.of("owner", "org", "pattern", slug + ".org.default.echo", "action",
                "require_approval")).status()).isEqualTo(200);
        TetherClient.Reply paused = a.post("/api/executions", Map.of("code",
                "return await tools." + slug + ".org.default.echo({text: 'paused on A'})"));
        assertThat(paused.json().path("status").asString()).as(paused.toString()).isEqualTo("paused");
        String id = paused.json().path("structured").path("executionId").asString();

        DurableRuns.Agent onA = new DurableRuns.Agent(a.baseUrl() + "/mcp", TOKEN);
        String session = onA.initialize();
        JsonNode executed = onA.call(session, "execute", Map.of("code", "return await tools." + slug
                + ".org.default.echo({text: 'agent on A'})"));
        String agentsExecution = executed.at("/result/structuredContent/executionId").asString();
        assertThat(agentsExecution).as(executed.toString()).startsWith("exec_" + instanceA + "_");

        replicas.get(0).close();
        TetherClient b = start(postgres, schema, dir.resolve("b"), key);
        assertThat(b.get("/api/executions/" + id).json().path("text").asString()).as("shown by B from the store")
                .isEqualTo(paused.json().path("text").asString());
        TetherClient.Reply resumed = b.post("/api/executions/" + id + "/resume", Map.of("action", "accept"));
        assertThat(resumed.status()).as(resumed.toString()).isEqualTo(200);
        assertThat(resumed.json().path("structured").path("result").path("data").path("content").get(0).path("text").asString())
                .isEqualTo("paused on A");

        DurableRuns.Agent onB = new DurableRuns.Agent(b.baseUrl() + "/mcp", TOKEN);
        assertThat(onB.send(session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}").statusCode())
                .as("the agent's session went with A").isEqualTo(404);
        JsonNode agentResumed = onB.call(onB.initialize(), "resume", Map.of("executionId", agentsExecution, "action", "accept"));
        assertThat(agentResumed.at("/result/structuredContent/status").asString()).as(agentResumed.toString()).isEqualTo("completed");
        assertThat(agentResumed.toString()).contains("agent on A");
        assertThat(Files.readAllLines(calls)).as("each approved call reached the server once").hasSize(2);
    }

    private static HttpRequest.Builder mcp(TetherClient replica, String session) {
        return mcp(replica, "/mcp", session);
    }

    private static HttpRequest.Builder mcp(TetherClient replica, String path, String session) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(replica.baseUrl() + path))
                .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream").timeout(BOUND);
        return session == null ? request : request.header("Mcp-Session-Id", session);
    }

    /** Registers connections through {@code client} until one is owned by {@code instance} (its own or a peer); returns its slug. */
    private static String registerOwnedBy(TetherClient client, String instance, ConnectionOwners owners, List<String> command) {
        for (int i = 0; i < 40; i++) {
            String slug = client.register("owned" + i, command);
            ConnectionKey key = ConnectionKey.org(slug, "default");
            if (owners.remoteOwner(key).map(ConnectionOwners.Peer::instance).orElse(owners.instance()).equals(instance)) {
                return slug;
            }
        }
        throw new AssertionError("no connection of 40 is owned by " + instance);
    }

    /** Replicas A (with {@code argsOfA}) and B on a fresh schema, once each sees both leases. */
    private List<TetherClient> twoLiveReplicas(String schemaPrefix, String... argsOfA) {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema(schemaPrefix);
        TetherClient a = start(postgres, schema, dir.resolve("a"), argsOfA);
        TetherClient b = start(postgres, schema, dir.resolve("b"));
        await().atMost(BOUND).until(() -> live(0) == 2 && live(1) == 2);
        return List.of(a, b);
    }

    private ConnectionOwners owners(int replica) {
        return replicas.get(replica).getBean(ConnectionOwners.class);
    }

    private double live(int replica) {
        return replicas.get(replica).getBean(MeterRegistry.class).get("tether.replicas.live").gauge().value();
    }

    private double forwarded(int replica, String outcome) {
        return replicas.get(replica).getBean(MeterRegistry.class).get("tether.replicas.forwarded").tag("outcome", outcome)
                .counter().count();
    }

    private double liveChildren(int replica) {
        return replicas.get(replica).getBean(MeterRegistry.class).find("tether.children.live").gauges().stream()
                .mapToDouble(gauge -> gauge.value()).sum();
    }

    private double probes(int replica, String outcome) {
        return replicas.get(replica).getBean(MeterRegistry.class).get("tether.replicas.probes").tag("outcome", outcome)
                .counter().count();
    }

    private double spawned(int replica) {
        return replicas.get(replica).getBean(MeterRegistry.class).find("tether.children.spawned").counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    private TetherClient start(PostgresDatabase postgres, String schema, Path dataDir, String... more) {
        List<String> arguments = new ArrayList<>(storeArguments(postgres, schema, dataDir));
        arguments.add("--tether.replicas.address=127.0.0.1");
        // a setting given here replaces the default of the same name
        for (String setting : more) {
            arguments.removeIf(given -> given.startsWith(setting.substring(0, setting.indexOf('=') + 1)));
            arguments.add(setting);
        }
        return launch(arguments);
    }

    /** A replica's settings on {@code schema}: the documented defaults but for short intervals, and one token and key. */
    private static List<String> storeArguments(PostgresDatabase postgres, String schema, Path dataDir) {
        return List.of(
                "--server.port=0", "--tether.data-dir=" + dataDir, "--tether.api.token=" + TOKEN,
                "--tether.store.secret-key=" + PostgresDatabase.storeKey(schema),
                "--tether.docker.reap-interval=1h", "--spring.main.banner-mode=off",
                "--tether.store.change-poll=200ms",
                "--tether.replicas.heartbeat=500ms", "--tether.replicas.lease-ttl=5s",
                // no load balancer sends to a replica here after its stop: the drain's wait for stragglers (2 s by
                // default) only lengthened each close (a forwarded request to a draining owner: a test of its own)
                "--tether.replicas.drain-delay=0s",
                "--spring.r2dbc.url=" + postgres.r2dbcUrl(schema), "--spring.r2dbc.username=" + postgres.user(),
                "--spring.r2dbc.password=" + postgres.password(),
                "--spring.flyway.url=" + postgres.jdbcUrl(schema), "--spring.flyway.user=" + postgres.user(),
                "--spring.flyway.password=" + postgres.password());
    }

    private TetherClient launch(List<String> arguments) {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(TetherApplication.class)
                .run(arguments.toArray(String[]::new));
        replicas.add(context);
        return new TetherClient(Integer.parseInt(context.getEnvironment().getProperty("local.server.port")), TOKEN);
    }
}
