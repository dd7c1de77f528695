package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.testsupport.Await;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresPostgres;
import dev.tether.testsupport.ZipkinReceiver;
import dev.tether.testsupport.ZipkinReceiver.Span;

/**
 * One request's way as a trace, across replicas: two packaged daemons on one PostgreSQL export their spans to a real
 * HTTP receiver of Zipkin's v2 JSON ({@link ZipkinReceiver}). The same tool call goes to each replica, each under a
 * trace of the test's own ({@code traceparent}); one of them owns the connection, so exactly one call is passed on. That
 * call's trace holds, in one trace id and with each parent where it belongs: the non-owner's server span (the test's
 * span its parent), its client span for the hop, the owner's server span under that client span, the owner's lease of
 * the session and the child's JSON-RPC round trip ({@code tools/call}) under it. The child's start ({@code initialize})
 * is under the lease that caused it; once the session idles out, the child's teardown arrives too.
 */
@RequiresPostgres
class TracesAcrossReplicasIT {

    private static final String TOKEN = "traces-it-" + UUID.randomUUID();
    private static final Duration BOUND = Duration.ofSeconds(90);
    private static final SecureRandom RANDOM = new SecureRandom();

    @TempDir
    Path dir;

    private final List<PackagedDaemon> daemons = new ArrayList<>();
    private ZipkinReceiver zipkin;

    @AfterEach
    void stop() throws InterruptedException {
        PackagedDaemon.closeAll(daemons);
        for (PackagedDaemon daemon : daemons) {
            // What a replica said of its exports, for a failure's reader: the logs go with the temp dir.
            try (var lines = java.nio.file.Files.lines(daemon.log())) {
                lines.filter(line -> line.toLowerCase(java.util.Locale.ROOT).matches(".*(zipkin|export|span|opentelemetry).*"))
                        .limit(40).forEach(line -> System.out.println("[traces] " + daemon.log().getParent().getFileName() + ": " + line));
            }
            catch (java.io.IOException unreadable) {
                System.out.println("[traces] cannot read " + daemon.log() + ": " + unreadable);
            }
        }
        if (zipkin != null) {
            zipkin.close();
        }
    }

    @Test
    void aToolCallPassedToItsOwnerIsOneTraceAcrossBothReplicasDownToTheChild() throws Exception {
        zipkin = ZipkinReceiver.start();
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        Map<String, String> store = new HashMap<>(postgres.daemonEnvironment(postgres.createSchema("traces")));
        byte[] key = new byte[32];
        RANDOM.nextBytes(key);
        store.put("TETHER_STORE_SECRET_KEY", Base64.getEncoder().encodeToString(key));
        for (int i = 0; i < 2; i++) {
            daemons.add(PackagedDaemon.start(PackagedDaemon.jarOrSkip(), dir.resolve("replica-" + i), List.of(
                    "--tether.api.token=" + TOKEN, "--tether.replicas.address=127.0.0.1", "--tether.replicas.heartbeat=1s",
                    "--tether.store.change-poll=200ms", "--tether.session.idle-ttl=3s", "--spring.application.name=replica-" + i,
                    "--management.tracing.export.zipkin.enabled=true",
                    "--management.tracing.export.zipkin.endpoint=" + zipkin.endpoint(),
                    "--management.opentelemetry.tracing.export.schedule-delay=200ms"), store));
        }
        List<TetherClient> clients = daemons.stream().map(daemon -> new TetherClient(daemon.port(), TOKEN)).toList();
        Await.until(() -> clients.stream().allMatch(client -> client.metrics().sum("tether_replicas_live") == 2), BOUND,
                () -> "both replicas see both leases");
        String slug = clients.get(0).register("traced", Fixture.everythingCommand());
        Await.until(() -> clients.get(1).get("/api/connections").json().size() == 1, BOUND, () -> "replica 1 has read the connection");

        // The same call at each replica, each in a trace of the test's; the test's span is the root's parent.
        Map<String, String> traces = new HashMap<>();
        Map<String, String> callerSpans = new HashMap<>();
        for (int i = 0; i < 2; i++) {
            String traceId = hex(16);
            String callerSpan = hex(8);
            traces.put("replica-" + i, traceId);
            callerSpans.put(traceId, callerSpan);
            HttpResponse<String> answer = HttpClient.newHttpClient().send(daemons.get(i).request("/api/tools/call")
                            .header("traceparent", "00-" + traceId + "-" + callerSpan + "-01")
                            .POST(HttpRequest.BodyPublishers.ofString(JsonMapper.builder().build().writeValueAsString(Map.of(
                                    "address", "tools." + slug + ".org.default.echo", "args", Map.of("message", "traced " + i))))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            assertThat(answer.body()).contains("traced " + i);
        }

        // Each trace is complete once the child's round trip and both ends of the request's server span arrived.
        for (String traceId : traces.values()) {
            zipkin.await(all -> all.stream().anyMatch(span -> span.traceId().equals(traceId) && span.name().equals("tether.mcp.call"))
                            && all.stream().filter(span -> span.traceId().equals(traceId) && "SERVER".equals(span.kind()))
                            .anyMatch(span -> callerSpans.get(traceId).equals(span.parentId())),
                    BOUND, "the child's round trip and the entry's server span in trace " + traceId);
        }
        List<List<Span>> spanning = traces.values().stream().map(zipkin::trace)
                .filter(trace -> trace.stream().map(Span::service).distinct().count() == 2).toList();
        assertThat(spanning).as("traces that span both replicas (one call of the two went to its owner's peer): %s", zipkin.all())
                .hasSize(1);
        List<Span> trace = spanning.get(0);
        String traceId = trace.get(0).traceId();
        assertThat(trace).allSatisfy(span -> assertThat(span.traceId()).isEqualTo(traceId));

        Span entry = only(trace, span -> "SERVER".equals(span.kind()) && callerSpans.get(traceId).equals(span.parentId()), "the entry's server span");
        String nonOwner = entry.service();
        Span hop = only(trace, span -> "CLIENT".equals(span.kind()) && span.service().equals(nonOwner), "the hop's client span");
        assertThat(ancestors(trace, hop)).as("the hop is inside the entry's request").contains(entry.id());
        Span owned = only(trace, span -> "SERVER".equals(span.kind()) && hop.id().equals(span.parentId()), "the owner's server span");
        assertThat(owned.service()).as("the owner").isNotEqualTo(nonOwner);
        Span lease = only(trace, span -> span.name().equals("tether.session.lease"), "the session's lease");
        assertThat(lease.service()).isEqualTo(owned.service());
        assertThat(lease.tags()).containsEntry("tether.connection", "org/" + slug + "/default");
        assertThat(ancestors(trace, lease)).as("the lease is inside the owner's request").contains(owned.id());
        Span call = only(trace, span -> span.name().equals("tether.mcp.call"), "the child's round trip");
        assertThat(call.tags()).containsEntry("tether.tool", "echo");
        assertThat(call.parentId()).as("the round trip is the lease's").isEqualTo(lease.id());

        // The child's start (here for the catalog sync that registering the server began, or for the first call) is
        // under the lease that caused it, on the owner.
        List<Span> started = zipkin.await(all -> all.stream().anyMatch(span -> span.name().equals("tether.mcp.initialize")), BOUND,
                "the child's start");
        Span start = only(started, span -> span.name().equals("tether.mcp.initialize"), "the child's start");
        assertThat(start.service()).isEqualTo(owned.service());
        assertThat(start.tags()).containsKey("tether.server");
        Span cause = only(zipkin.trace(start.traceId()), span -> span.id().equals(start.parentId()), "the start's parent");
        assertThat(cause.name()).as("the start's parent").isEqualTo("tether.session.lease");

        // Idle for 3 s, the owner's session goes, and its child's teardown is a span of the owner's.
        List<Span> after = zipkin.await(all -> all.stream().anyMatch(span -> span.name().equals("tether.child.teardown")), BOUND,
                "the child's teardown");
        Span teardown = only(after, span -> span.name().equals("tether.child.teardown"), "the child's teardown");
        assertThat(teardown.service()).isEqualTo(owned.service());
        assertThat(teardown.tags()).containsKeys("tether.child", "tether.teardown.reason");
    }

    private static Span only(List<Span> spans, java.util.function.Predicate<Span> which, String what) {
        List<Span> found = spans.stream().filter(which).toList();
        assertThat(found).as("%s among %s", what, spans).hasSize(1);
        return found.get(0);
    }

    /** The ids of {@code span}'s ancestors within {@code trace}, nearest first. */
    private static List<String> ancestors(List<Span> trace, Span span) {
        Map<String, Span> byId = trace.stream().collect(Collectors.toMap(Span::id, s -> s, (a, b) -> a));
        List<String> up = new ArrayList<>();
        Set<String> seen = new java.util.HashSet<>();
        for (Optional<Span> at = Optional.ofNullable(byId.get(span.parentId())); at.isPresent() && seen.add(at.get().id());
                at = Optional.ofNullable(byId.get(at.get().parentId()))) {
            up.add(at.get().id());
        }
        return up;
    }

    private static String hex(int bytes) {
        byte[] random = new byte[bytes];
        RANDOM.nextBytes(random);
        return HexFormat.of().formatHex(random);
    }
}
