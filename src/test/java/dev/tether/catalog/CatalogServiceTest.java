package dev.tether.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.catalog.CatalogService.ConnectionTools;
import dev.tether.session.HarnessedTest;
import dev.tether.session.PoolHarness;
import dev.tether.session.SessionProperties;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;
import dev.tether.store.StoredCatalog;
import dev.tether.store.StoredTool;

/**
 * Catalog syncs against real fixture processes: what is kept when a sync is incomplete or fails, what makes a
 * catalog stale (TTL on a clock the test moves, a newer config, {@code tools/list_changed}), the grace of a read,
 * single-flight and bounded syncs. What a server was asked is read from its own {@code --record} file.
 */
class CatalogServiceTest extends HarnessedTest {

    private static final Duration BOUND = Duration.ofSeconds(20);
    /** echo, slow, hang, crash, delete_everything: the fixture's fixed tools, before tool_1..tool_N. */
    private static final int FIXED_TOOLS = 5;

    private CatalogService catalog(CatalogProperties properties) {
        harness = PoolHarness.builder(dir).build();
        return harness.catalog(properties);
    }

    @Test
    void incompleteCatalogKeepsTheStoredOneAndDegradesTheConnection() {
        CatalogService catalog = catalog(CatalogProperties.defaults());
        ConnectionKey key = harness.connect("paged", harness.fixture("paged", "--tools=3"));
        ConnectionTools first = catalog.refresh(key).block(BOUND);
        StoredCatalog stored = storedCatalog(key);
        assertThat(first.tools()).hasSize(FIXED_TOOLS + 3);

        harness.reconfigure("paged", harness.fixture("paged", "--tools=10", "--page-size=4", "--incomplete-catalog"));
        ConnectionTools second = catalog.refresh(key).block(BOUND);

        assertThat(second.tools()).as("the answer is the preserved catalog").isEqualTo(first.tools());
        assertThat(storedCatalog(key)).as("the store keeps the last complete catalog").isEqualTo(stored);
        assertThat(lastHealth(key)).hasValueSatisfying(verdict -> {
            assertThat(verdict.status()).isEqualTo("degraded");
            assertThat(verdict.detail()).hasValueSatisfying(detail -> assertThat(detail)
                    .contains("catalog preserved").contains("tools/list page 2 failed").contains("catalog page unavailable"));
        });
        assertThat(harness.recorded("paged", "tools/list")).as("page 1 of the first sync, pages 1 and 2 of the second").isEqualTo(3);
        assertThat(syncs("incomplete")).isEqualTo(1);
        assertThat(syncs("ok")).isEqualTo(1);
    }

    @Test
    void failedSyncKeepsTheStoredCatalogAndNamesTheCause() {
        CatalogService catalog = catalog(CatalogProperties.defaults());
        ConnectionKey key = harness.connect("flaky", harness.fixture("flaky"));
        ConnectionTools first = catalog.refresh(key).block(BOUND);
        StoredCatalog stored = storedCatalog(key);

        harness.reconfigure("flaky", harness.fixture("flaky", "--exit-at-start=5"));
        ConnectionTools second = catalog.refresh(key).block(BOUND);

        assertThat(second.tools()).isEqualTo(first.tools());
        assertThat(storedCatalog(key)).isEqualTo(stored);
        assertThat(lastHealth(key)).hasValueSatisfying(verdict -> {
            assertThat(verdict.status()).isEqualTo("degraded");
            assertThat(verdict.detail()).hasValueSatisfying(detail -> assertThat(detail)
                    .contains("catalog preserved").contains("'flaky'").contains("exited with code 5"));
        });
        assertThat(syncs("failed")).isEqualTo(1);
    }

    @Test
    void changesNameTheIntegrationWhenASyncStoresOtherToolsOrItsServerAnnouncesAChange() {
        CatalogService catalog = catalog(CatalogProperties.defaults());
        List<String> changes = new CopyOnWriteArrayList<>();
        Disposable watching = catalog.changes().subscribe(changes::add);
        try {
            ConnectionKey key = harness.connect("changing", harness.fixture("changing", "--tools=3"));
            catalog.refresh(key).block(BOUND);
            assertThat(changes).as("the first catalog").containsExactly("changing");

            catalog.refresh(key).block(BOUND);
            assertThat(changes).as("the same tools again").containsExactly("changing");

            harness.reconfigure("changing", harness.fixture("changing", "--tools=4"));
            catalog.refresh(key).block(BOUND);
            assertThat(changes).as("one tool more").containsExactly("changing", "changing");

            harness.reconfigure("changing", harness.fixture("changing", "--tools=4", "--list-changed-after=100"));
            catalog.refresh(key).block(BOUND);
            await().atMost(BOUND).until(() -> changes.size() == 3);
        } finally {
            watching.dispose();
        }
    }

    /**
     * A server's {@code list_changed} is synced at once, on the session that announced it and with nobody asking, so
     * that the store (which other replicas read) holds the new catalog; the next read finds it fresh.
     */
    @Test
    void listChangedIsSyncedAtOnceOnTheSessionThatAnnouncedIt() {
        CatalogService catalog = catalog(CatalogProperties.defaults());
        ConnectionKey key = harness.connect("lively", harness.fixture("lively", "--list-changed-after=2500"));
        List<ConnectionKey> announced = new CopyOnWriteArrayList<>();
        Disposable watching = harness.pool().toolsChanged().subscribe(announced::add);
        catalog.refresh(key).block(BOUND);
        Instant firstSync = storedCatalog(key).syncedAt();

        tools(catalog, key);
        assertThat(harness.recorded("lively", "tools/list")).as("fresh: read from the store").isEqualTo(1);
        harness.clock().advance(Duration.ofSeconds(1));

        await().atMost(BOUND).until(() -> announced.contains(key));
        await().atMost(BOUND).until(() -> storedCatalog(key).syncedAt().isAfter(firstSync));
        Instant changedSync = storedCatalog(key).syncedAt();
        assertThat(storedCatalog(key).tools()).hasSize(FIXED_TOOLS + 3);
        assertThat(harness.spawns("lively")).as("on the same warm session").isEqualTo(1);

        assertThat(tools(catalog, key)).hasSize(FIXED_TOOLS + 3);
        assertThat(storedCatalog(key).syncedAt()).as("fresh again: read from the store").isEqualTo(changedSync);
        watching.dispose();
    }

    @Test
    void catalogOlderThanTheTtlIsSyncedAgain() {
        CatalogService catalog = catalog(new CatalogProperties(Duration.ofMinutes(15), null, null));
        ConnectionKey key = harness.connect("aging", harness.fixture("aging"));
        catalog.refresh(key).block(BOUND);

        harness.clock().advance(Duration.ofMinutes(15));
        tools(catalog, key);
        assertThat(harness.recorded("aging", "tools/list")).as("exactly the TTL old: still fresh").isEqualTo(1);

        harness.clock().advance(Duration.ofSeconds(1));
        tools(catalog, key);
        assertThat(harness.recorded("aging", "tools/list")).as("older than the TTL").isEqualTo(2);
        assertThat(storedCatalog(key).syncedAt()).isEqualTo(harness.clock().instant());
    }

    @Test
    void catalogOlderThanItsConfigIsSyncedAgainOnANewSession() {
        CatalogService catalog = catalog(CatalogProperties.defaults());
        ConnectionKey key = harness.connect("moving", harness.fixture("moving", "--tools=1"));
        catalog.refresh(key).block(BOUND);
        assertThat(tools(catalog, key)).hasSize(FIXED_TOOLS + 1);

        harness.reconfigure("moving", harness.fixture("moving", "--tools=4"));
        List<StoredTool> tools = tools(catalog, key);

        assertThat(tools).hasSize(FIXED_TOOLS + 4);
        assertThat(storedCatalog(key).syncedAt()).as("synced after the change").isEqualTo(harness.clock().instant());
        assertThat(harness.spawns("moving")).as("the old session does not serve the new config").isEqualTo(2);
    }

    /** The grace's length is judged in virtual time ({@link CatalogTimingTest}); here, that the read does not wait for the sync. */
    @Test
    void readOfAStaleCatalogAnswersFromTheStoreWithinTheGraceAndStoresTheSyncLater() throws IOException {
        CatalogService catalog = catalog(new CatalogProperties(null, null, Duration.ofMillis(200)));
        Path gate = dir.resolve("sluggish.gate");
        ConnectionKey key = harness.connect("sluggish", harness.fixture("sluggish", "--start-when=" + gate, "--tools=2"));
        StoredTool old = new StoredTool("old_tool", "old_tool", "from an earlier sync", false, Map.of("type", "object"), null);
        harness.stores().catalogs().saveCatalog(key, new StoredCatalog(List.of(old), harness.clock().instant().minus(Duration.ofHours(1))))
                .block(BOUND);

        long start = System.nanoTime();
        List<StoredTool> answered = tools(catalog, key);
        long tookMillis = (System.nanoTime() - start) / 1_000_000;

        // The server reads nothing until the gate opens: the sync cannot have ended, so the answer did not wait for it.
        assertThat(answered).containsExactly(old);
        assertThat(harness.recorded("sluggish", "initialize")).as("the server has not read its handshake yet").isZero();
        Files.createFile(gate);
        await().atMost(BOUND).until(() -> storedCatalog(key).tools().size() == FIXED_TOOLS + 2);
        assertThat(harness.spawns("sluggish")).isEqualTo(1);
        System.out.printf("FIGURES grace: stale read answered from the store in %d ms (grace 200 ms, the sync held back)%n",
                tookMillis);
    }

    @Test
    void concurrentRefreshesShareOneSync() {
        CatalogService catalog = catalog(CatalogProperties.defaults());
        ConnectionKey key = harness.connect("shared", harness.fixture("shared", "--slow-start=500"));

        List<ConnectionTools> results = Flux.range(0, 20).flatMap(i -> catalog.refresh(key), 20).collectList().block(BOUND);

        assertThat(results).hasSize(20).allSatisfy(result -> assertThat(result.tools()).hasSize(FIXED_TOOLS + 3));
        assertThat(harness.recorded("shared", "tools/list")).isEqualTo(1);
        assertThat(harness.spawns("shared")).isEqualTo(1);
    }

    /**
     * The queued sync is looked for beside a peer: a session of a third connection asked for after it, straight from
     * the pool. Once that one has started and answered, a sync that had not queued would have started too, on any
     * host, where a pause of fixed length would prove nothing on a slow one.
     */
    @Test
    void syncsBeyondTheConcurrencyWaitForARunningOne() throws IOException {
        CatalogService catalog = catalog(new CatalogProperties(null, 1, null));
        Path gate = dir.resolve("first.gate");
        ConnectionKey slow = harness.connect("first", harness.fixture("first", "--start-when=" + gate));
        ConnectionKey queued = harness.connect("second", harness.fixture("second"));
        ConnectionKey peer = harness.connect("peer", harness.fixture("peer"));

        Mono<ConnectionTools> slowSync = catalog.refresh(slow).cache();
        slowSync.subscribe(ignored -> { }, error -> { });
        await().atMost(BOUND).until(() -> harness.spawns("first") == 1);
        Mono<ConnectionTools> queuedSync = catalog.refresh(queued).cache();
        queuedSync.subscribe(ignored -> { }, error -> { });
        assertThat(harness.pool().withSession(peer, session -> session.ping().thenReturn("pong")).block(BOUND)).isEqualTo("pong");
        assertThat(harness.spawns("second")).as("queued behind the running sync").isZero();
        Files.createFile(gate);

        assertThat(slowSync.block(BOUND).tools()).isNotEmpty();
        assertThat(queuedSync.block(BOUND).tools()).isNotEmpty();
        assertThat(harness.spawns("second")).isEqualTo(1);
    }

    /**
     * A sync refused (here by the session cap, after its start waited) must still end, keep what is stored and leave the
     * connection syncable: it once stayed "in flight" for ever, so every later refresh hung.
     */
    @Test
    void syncRefusedAtTheSessionCapEndsAndTheConnectionCanSyncLater() {
        // A start at the cap waits 2 s for a place, then is refused.
        harness = PoolHarness.builder(dir).sessions(new SessionProperties(null, 1, null, null, null, null, Duration.ofSeconds(2), null)).build();
        CatalogService catalog = harness.catalog(CatalogProperties.defaults());
        ConnectionKey busy = harness.connect("busy", harness.fixture("busy"));
        ConnectionKey other = harness.connect("other", harness.fixture("other"));
        Disposable lease = harness.hold(busy);

        ConnectionTools refused = catalog.refresh(other).block(Duration.ofSeconds(5));

        assertThat(refused.tools()).isEmpty();
        assertThat(lastHealth(other)).hasValueSatisfying(verdict -> assertThat(verdict.detail())
                .hasValueSatisfying(detail -> assertThat(detail).contains("tether.session.max-sessions")));
        assertThat(catalog.refresh(other).block(Duration.ofSeconds(5)).tools()).as("refused again, not hung").isEmpty();

        lease.dispose(); // busy is idle now and gives way at the cap
        assertThat(catalog.refresh(other).block(BOUND).tools()).hasSize(FIXED_TOOLS + 3);
        assertThat(storedCatalog(other).tools()).hasSize(FIXED_TOOLS + 3);
    }

    private static List<StoredTool> tools(CatalogService catalog, ConnectionKey key) {
        List<ConnectionTools> answer = catalog.tools(Optional.of(key.integration()), Optional.of(key.owner()), Optional.of(key.name()))
                .collectList().block(BOUND);
        assertThat(answer).hasSize(1);
        return answer.get(0).tools();
    }

    private StoredCatalog storedCatalog(ConnectionKey key) {
        return harness.stores().catalogs().catalog(key).block(BOUND);
    }

    private Optional<HealthVerdict> lastHealth(ConnectionKey key) {
        return harness.stores().connections().find(key).blockOptional(BOUND).flatMap(Connection::lastHealth);
    }

    private long syncs(String outcome) {
        return harness.registry().find("tether.catalog.sync").tag("outcome", outcome).timers().stream()
                .mapToLong(timer -> timer.count()).sum();
    }
}
