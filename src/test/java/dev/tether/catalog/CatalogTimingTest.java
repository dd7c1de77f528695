package dev.tether.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.catalog.CatalogService.ConnectionTools;
import dev.tether.mcp.ToolCatalog;
import dev.tether.session.SessionPool;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Integration;
import dev.tether.store.Owner;
import dev.tether.store.StdioConfig;
import dev.tether.store.StoredCatalog;
import dev.tether.store.StoredTool;
import dev.tether.store.storage.TestStores;

/**
 * The grace of a catalog read in virtual time: the pool is a stand-in whose {@code tools/list} answers after a
 * set virtual delay; the real thing is {@link CatalogServiceTest}.
 */
class CatalogTimingTest {

    /** How long a store write or a sync may take before the test calls it stuck: only a failure waits for it, on any host's load. */
    private static final Duration STUCK = Duration.ofSeconds(60);

    private static final Duration GRACE = Duration.ofSeconds(2);
    private static final Duration SYNC = Duration.ofSeconds(10);
    private static final Instant NOW = Instant.parse("2025-01-01T00:00:00Z");

    private final TestStores.Stores stores = TestStores.embeddedOnTheCallersThread();
    private final Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
    private final SessionPool pool = mock(SessionPool.class);
    private final AtomicInteger listings = new AtomicInteger();
    private final StoredTool old = new StoredTool("old_tool", "old_tool", "from an earlier sync", false, Map.of(), null);
    private final ConnectionKey key = ConnectionKey.org("slow", "main");
    private CatalogService catalog;

    @BeforeEach
    void listAfterADelay() {
        when(pool.toolsChanged()).thenReturn(Flux.never());
        doAnswer(call -> Mono.delay(SYNC)
                .doOnSubscribe(s -> listings.incrementAndGet())
                .thenReturn(new ToolCatalog(List.of(Tool.builder().name("New Tool").inputSchema(Map.of("type", "object")).build()),
                        Optional.empty())))
                .when(pool).withSession(any(), any());
        stores.integrations().create(new Integration("slow", "slow", "", new StdioConfig("true", null, null, null), NOW.minusSeconds(3600)))
                .then(stores.connections().create(new Connection(key, "none", Optional.empty(), Optional.empty()), Map.of()))
                .block(STUCK);
    }

    @AfterEach
    void realTimeAgain() {
        if (catalog != null) {
            catalog.stop();
        }
        VirtualTimeScheduler.reset();
    }

    private CatalogService started() {
        return started(OwnerSyncs.LOCAL);
    }

    private CatalogService started(OwnerSyncs owners) {
        catalog = new CatalogService(pool, stores.integrations(), stores.connections(), stores.catalogs(),
                new CatalogProperties(Duration.ofMinutes(15), null, GRACE), clock, new SimpleMeterRegistry(), owners);
        catalog.start();
        return catalog;
    }

    @Test
    void staleCatalogIsAnsweredFromTheStoreAfterExactlyTheGrace() {
        storeCatalogSyncedAt(NOW.minus(Duration.ofMinutes(16)));

        StepVerifier.withVirtualTime(() -> started().tools(Optional.empty(), Optional.empty(), Optional.empty()))
                .expectSubscription()
                .expectNoEvent(GRACE.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .assertNext(answer -> assertThat(answer.tools()).containsExactly(old))
                .expectComplete()
                .verify(Duration.ofSeconds(5));
        assertThat(listings).hasValue(1);
    }

    @Test
    void syncThatOutlivesTheGraceIsStoredWhenItEnds() {
        storeCatalogSyncedAt(NOW.minus(Duration.ofMinutes(16)));
        VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();
        started();

        CompletableFuture<List<ConnectionTools>> answer = catalog.tools(Optional.empty(), Optional.empty(), Optional.empty())
                .collectList().toFuture();
        time.advanceTimeBy(GRACE.minusMillis(1));
        assertThat(answer).isNotDone();
        time.advanceTimeBy(Duration.ofMillis(1));
        assertThat(answer.getNow(null)).singleElement().satisfies(tools -> assertThat(tools.tools()).containsExactly(old));
        assertThat(stores.catalogs().catalog(key).block().tools()).as("still the old one").containsExactly(old);

        time.advanceTimeBy(SYNC.minus(GRACE));

        StoredCatalog stored = stores.catalogs().catalog(key).block();
        assertThat(stored.tools()).extracting(StoredTool::name).containsExactly("new_tool");
        assertThat(stored.syncedAt()).isEqualTo(NOW);
        assertThat(listings).as("one sync, not one per read").hasValue(1);
    }

    @Test
    void freshCatalogIsAnsweredAtOnceWithoutSyncing() {
        storeCatalogSyncedAt(NOW.minus(Duration.ofMinutes(14)));

        StepVerifier.withVirtualTime(() -> started().tools(Optional.empty(), Optional.empty(), Optional.empty()))
                .expectSubscription()
                .assertNext(answer -> assertThat(answer.tools()).containsExactly(old))
                .expectComplete()
                .verify(Duration.ofSeconds(5));
        verify(pool, never()).withSession(any(), any());
    }

    @Test
    void neverSyncedConnectionIsAnsweredEmptyAfterTheGrace() {
        StepVerifier.withVirtualTime(() -> started().tools(Optional.empty(), Optional.empty(), Optional.empty()))
                .expectSubscription()
                .expectNoEvent(GRACE.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .assertNext(answer -> assertThat(answer.tools()).isEmpty())
                .expectComplete()
                .verify(Duration.ofSeconds(5));
    }

    /**
     * Beside other replicas, a stale catalog of a connection a peer owns is synced by that peer, which stores it, and
     * read back here: listed, asked for by a tool call, or refreshed by an execution, it starts no session here, and
     * a change is announced to this replica's agents as a sync here would.
     */
    @Test
    void staleCatalogOfAPeersConnectionIsSyncedByItsOwnerNeverOnASessionHere() {
        storeCatalogSyncedAt(NOW.minus(Duration.ofMinutes(16)));
        StoredTool fresh = new StoredTool("fresh_tool", "fresh_tool", "as the owner listed it", false, Map.of(), null);
        AtomicInteger asked = new AtomicInteger();
        OwnerSyncs owner = (connection, here) -> Optional.of(Mono.defer(() -> {
            asked.incrementAndGet();
            return stores.catalogs().saveCatalog(connection, new StoredCatalog(List.of(fresh), NOW));
        }));
        List<String> announced = new CopyOnWriteArrayList<>();
        started(owner).changes().subscribe(announced::add);

        assertThat(catalog.tools(Optional.empty(), Optional.empty(), Optional.empty()).collectList().block(STUCK))
                .singleElement().satisfies(listed -> assertThat(listed.tools()).containsExactly(fresh));
        assertThat(announced).containsExactly("slow");
        assertThat(catalog.syncIfStale(key).block(STUCK).tools()).as("fresh now: no second sync").containsExactly(fresh);
        assertThat(asked).hasValue(1);
        assertThat(catalog.refreshAtOwner(key).block(STUCK).tools()).containsExactly(fresh);
        assertThat(asked).hasValue(2);
        verify(pool, never()).withSession(any(), any());
        assertThat(listings).hasValue(0);
    }

    /** An owner that does not answer: the stored catalog is answered, and the connection is not marked degraded here. */
    @Test
    void ownerThatDoesNotAnswerLeavesTheStoredCatalogAndTheVerdictAlone() {
        storeCatalogSyncedAt(NOW.minus(Duration.ofMinutes(16)));
        OwnerSyncs silent = (connection, here) -> Optional.of(Mono.error(new IllegalStateException("replica ghost001 did not answer")));

        assertThat(started(silent).tools(Optional.empty(), Optional.empty(), Optional.empty()).collectList().block(STUCK))
                .singleElement().satisfies(listed -> assertThat(listed.tools()).containsExactly(old));
        assertThat(stores.connections().find(key).block(STUCK).lastHealth()).isEmpty();
        verify(pool, never()).withSession(any(), any());
    }

    /**
     * A sync a peer asked of this replica (the refresh route, forwarded here) runs here even while this replica's own
     * sync of that connection waits on that very peer: joining it, two replicas whose lease snapshots differ for a
     * heartbeat would wait on each other for good.
     */
    @Test
    void aSyncAPeerAsksForRunsHereAndNeverJoinsOneSentToThatPeer() {
        storeCatalogSyncedAt(NOW.minus(Duration.ofMinutes(16)));
        OwnerSyncs waitingOnThePeer = (connection, here) -> Optional.of(Mono.never());
        started(waitingOnThePeer);

        Disposable listing = catalog.tools(Optional.empty(), Optional.empty(), Optional.empty()).subscribe();
        Disposable refreshing = catalog.refresh(key).subscribe();

        assertThat(listings).as("the peer's refresh listed the tools here").hasValue(1);
        listing.dispose();
        refreshing.dispose();
    }

    private void storeCatalogSyncedAt(Instant syncedAt) {
        stores.catalogs().saveCatalog(key, new StoredCatalog(List.of(old), syncedAt)).block(Duration.ofSeconds(1));
    }
}
