package dev.tether.calls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

import dev.tether.calls.builtin.BuiltinTools;
import dev.tether.catalog.CatalogProperties;
import dev.tether.catalog.CatalogService;
import dev.tether.identity.Audit;
import dev.tether.mcp.McpProperties;
import dev.tether.mcp.McpServerException;
import dev.tether.mcp.McpTimeoutException;
import dev.tether.session.BearerTokens;
import dev.tether.session.HarnessedTest;
import dev.tether.session.PoolHarness;
import dev.tether.store.ConnectionKey;
import dev.tether.testsupport.OsProcesses;

/**
 * Tool calls on pooled sessions against the real fixture: a call that is cancelled or outlives its timeout
 * reaches the server as {@code notifications/cancelled} (read from the fixture's {@code --record} file) and the
 * session stays warm; a crash mid-call fails naming the server and its exit code, and the next call gets a new
 * session.
 */
class ToolCallsTest extends HarnessedTest {

    private static final Duration BOUND = Duration.ofSeconds(20);
    private static final Duration CALL_TIMEOUT = Duration.ofMillis(700);

    private ToolCalls calls;
    private ConnectionKey key;

    private void start(Duration callTimeout) {
        harness = PoolHarness.builder(dir).mcp(new McpProperties(null, null, callTimeout, null, null)).build();
        CatalogService catalog = harness.catalog(CatalogProperties.defaults());
        BuiltinTools builtins = new BuiltinTools(JsonMapper.builder().build(), Stream::empty);
        calls = new ToolCalls(harness.pool(), new SourceCalls(harness.stores().integrations(), harness.stores().connections(), harness.stores().credentials(), List.of(), BearerTokens.NONE), harness.stores().catalogs(), builtins, catalog, JsonMapper.builder().build(), harness.registry(), OwnerCalls.LOCAL, Audit.NONE);
        key = harness.connect("worker", harness.fixture("worker"));
        catalog.refresh(key).block(BOUND);
    }

    /** A server registered a moment ago has no catalog yet: the call syncs it (within the grace) and goes through. */
    /** The sync outlasts a listing's grace (200 ms here, a server that takes a second to start): the call waits it out. */
    @Test
    void aCallBeforeAnyRefreshSyncsTheCatalogOnDemandHoweverLongTheSyncTakes() {
        harness = PoolHarness.builder(dir).build();
        CatalogService catalog = harness.catalog(new CatalogProperties(null, null, Duration.ofMillis(200)));
        BuiltinTools builtins = new BuiltinTools(JsonMapper.builder().build(), Stream::empty);
        calls = new ToolCalls(harness.pool(), new SourceCalls(harness.stores().integrations(), harness.stores().connections(), harness.stores().credentials(), List.of(), BearerTokens.NONE), harness.stores().catalogs(), builtins, catalog, JsonMapper.builder().build(),
                harness.registry(), OwnerCalls.LOCAL, Audit.NONE);
        key = harness.connect("worker", harness.fixture("worker", "--slow-start=1000"));
        assertThat(harness.stores().catalogs().catalog(key).blockOptional(BOUND)).as("no catalog yet").isEmpty();

        assertEcho("first call");
        assertThatThrownBy(() -> calls.call(address("no_such_tool"), Map.of()).block(BOUND))
                .isInstanceOf(ToolNotFoundException.class);
        assertThat(harness.stores().catalogs().catalog(key).blockOptional(BOUND)).as("synced and stored").isPresent();
    }

    @Test
    void cancelledCallReachesTheServerAndTheSessionStaysWarm() {
        start(Duration.ofSeconds(30));

        Disposable call = calls.call(address("hang"), Map.of()).subscribe(result -> { }, error -> { });
        await().atMost(BOUND).until(() -> harness.recorded("worker").contains("tools/call"));
        call.dispose();

        await().atMost(BOUND).until(() -> cancellations().size() == 1);
        assertThat(cancellations().get(0)).as("names the request id").matches("notifications/cancelled \\S+");
        assertEcho("still here");
        assertThat(harness.spawns("worker")).as("same session, no new spawn").isEqualTo(1);
        assertThat(calls("cancelled")).isEqualTo(1);
    }

    @Test
    void callThatOutlivesItsTimeoutIsCancelledOnTheServerAndTheSessionStaysWarm() {
        start(CALL_TIMEOUT);

        StepVerifier.create(calls.call(address("hang"), Map.of()))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(McpTimeoutException.class)
                        .hasMessageContaining("tools/call hang timed out after 700ms"))
                .verify(BOUND);

        await().atMost(BOUND).until(() -> cancellations().size() == 1);
        assertEcho("after a timeout");
        assertThat(harness.spawns("worker")).as("a slow tool is not a broken server: same session").isEqualTo(1);
        assertThat(calls("failed")).isEqualTo(1);
    }

    @Test
    void callThatAnswersInTimeIsNotCancelled() {
        start(Duration.ofSeconds(30));

        StepVerifier.create(calls.call(address("slow"), Map.of("ms", 300)))
                .assertNext(result -> assertThat(text(result.result())).isEqualTo("slept 300 ms"))
                .expectComplete()
                .verify(BOUND);

        assertThat(cancellations()).isEmpty();
        assertThat(calls("ok")).isEqualTo(1);
    }

    @Test
    void crashMidCallFailsNamingTheServerAndItsExitCodeAndTheNextCallGetsANewSession() {
        start(Duration.ofSeconds(30));
        long crashed = harness.spawnedPids("worker").get(0);

        StepVerifier.create(calls.call(address("crash"), Map.of()))
                .expectErrorSatisfies(error -> {
                    assertThat(error).isInstanceOf(McpServerException.class)
                            .hasMessageContaining("'worker'").hasMessageContaining("exited with code 3");
                    assertThat(((McpServerException) error).server()).isEqualTo("worker");
                    assertThat(((McpServerException) error).exitCode()).contains(3);
                })
                .verify(BOUND);
        OsProcesses.awaitGone(List.of(crashed), Duration.ofSeconds(10));

        assertEcho("replaced");
        assertThat(harness.spawns("worker")).as("the next call got a new session").isEqualTo(2);
        assertThat(harness.liveProcesses()).as("only the new session's process").hasSize(1);
    }

    @Test
    void callOfAToolNoCatalogHasSpawnsNothing() {
        start(Duration.ofSeconds(30));

        StepVerifier.create(calls.call(key.address() + ".no_such_tool", Map.of()))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(ToolNotFoundException.class)
                        .hasMessageContaining("no_such_tool"))
                .verify(BOUND);
        StepVerifier.create(calls.call("not.an.address", Map.of()))
                .expectError(ToolNotFoundException.class)
                .verify(BOUND);
        assertThat(harness.recorded("worker", "tools/call")).isZero();
    }

    private void assertEcho(String text) {
        StepVerifier.create(calls.call(address("echo"), Map.of("text", text)))
                .assertNext(result -> assertThat(text(result.result())).isEqualTo(text))
                .expectComplete()
                .verify(BOUND);
    }

    private String address(String tool) {
        return key.address() + "." + tool;
    }

    private List<String> cancellations() {
        return harness.recorded("worker").stream().filter(line -> line.startsWith("notifications/cancelled")).toList();
    }

    private long calls(String outcome) {
        return harness.registry().find("tether.calls").tag("outcome", outcome).timers().stream().mapToLong(t -> t.count()).sum();
    }

    private static String text(CallToolResult result) {
        return Optional.of(result.content().get(0)).map(TextContent.class::cast).map(TextContent::text).orElseThrow();
    }
}
