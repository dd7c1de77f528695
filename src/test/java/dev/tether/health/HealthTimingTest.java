package dev.tether.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.identity.Role;
import dev.tether.identity.Via;
import dev.tether.session.SessionPool;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;
import dev.tether.store.Integration;
import dev.tether.store.Owner;
import dev.tether.store.StdioConfig;
import dev.tether.store.storage.TestStores;

/**
 * The timing logic of health checks (linger, generations) in virtual time. The pool is a stand-in whose
 * "ping" on a connection is a probe that answers after a set virtual delay, so these tests show which probes
 * were started, joined or cancelled without any process; the real thing is {@link HealthServiceTest}.
 */
class HealthTimingTest {

    /** How long a store write or a sync may take before the test calls it stuck: only a failure waits for it, on any host's load. */
    private static final Duration STUCK = Duration.ofSeconds(60);

    private static final Duration ANSWER = Duration.ofSeconds(5);
    private static final Duration LINGER = Duration.ofMillis(250);

    private final TestStores.Stores stores = TestStores.embedded();
    private final Clock clock = Clock.fixed(Instant.parse("2025-01-01T00:00:00Z"), ZoneOffset.UTC);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SessionPool pool = mock(SessionPool.class);
    /** Every probe started per connection, in order. */
    private final Map<ConnectionKey, List<PublisherProbe<Void>>> probes = new ConcurrentHashMap<>();
    private VirtualTimeScheduler time;
    private HealthService health;

    @BeforeEach
    void answerPingsAfterADelay() {
        when(pool.withSession(any(), any(Duration.class), any())).thenAnswer(call -> {
            // built when the check subscribes, on the virtual clock
            PublisherProbe<Void> probe = PublisherProbe.of(Mono.delay(ANSWER).then());
            probes.computeIfAbsent(call.getArgument(0), k -> new CopyOnWriteArrayList<>()).add(probe);
            return probe.mono();
        });
    }

    @AfterEach
    void realTimeAgain() {
        if (health != null) {
            health.stop();
        }
        VirtualTimeScheduler.reset();
    }

    /** Virtual time from here on: the service and everything it assembles use it. */
    private void startInVirtualTime(HealthProperties properties) {
        time = VirtualTimeScheduler.getOrSet();
        health = new HealthService(pool, stores.connections(), properties, clock, registry, OwnerChecks.LOCAL);
        health.start();
    }

    @Test
    void checkNobodyWaitsForLingersSoANewAskerJoinsItAndIsCancelledAfterwards() {
        startInVirtualTime(new HealthProperties(null, null, LINGER));
        ConnectionKey key = connection("one");
        List<HealthVerdict> joined = new CopyOnWriteArrayList<>();

        Disposable leaving = health.check(key, Optional.empty()).subscribe();
        time.advanceTimeBy(Duration.ofSeconds(1));
        leaving.dispose();
        time.advanceTimeBy(LINGER.minusMillis(1));
        health.check(key, Optional.empty()).subscribe(joined::add);
        time.advanceTimeBy(ANSWER);

        assertThat(probes.get(key)).as("joined within the linger, not restarted").hasSize(1);
        assertThat(joined).extracting(HealthVerdict::status).containsExactly("healthy");
        assertThat(counter("coalesced")).isEqualTo(1.0);

        Disposable alone = health.check(key, Optional.empty()).subscribe();
        time.advanceTimeBy(Duration.ofSeconds(1));
        alone.dispose();
        time.advanceTimeBy(LINGER);
        assertThat(probes.get(key)).hasSize(2);
        probes.get(key).get(1).assertWasCancelled();

        List<HealthVerdict> later = new CopyOnWriteArrayList<>();
        health.check(key, Optional.empty()).subscribe(later::add);
        time.advanceTimeBy(ANSWER);
        assertThat(probes.get(key)).as("after the linger a check starts afresh").hasSize(3);
        assertThat(later).extracting(HealthVerdict::status).containsExactly("healthy");
        assertThat(counter("cancelled")).isEqualTo(2.0);
        assertThat(counter("healthy")).as("verdicts reached, one per finished probe").isEqualTo(2.0);
    }

    @Test
    void newerGenerationDropsTheUnstartedRestAndJoinsWhatBothWant() {
        startInVirtualTime(new HealthProperties(null, 1, LINGER));
        ConnectionKey a = connection("a");
        ConnectionKey b = connection("b");
        ConnectionKey c = connection("c");
        List<HealthEvent> first = new CopyOnWriteArrayList<>();
        List<HealthEvent> second = new CopyOnWriteArrayList<>();
        AtomicInteger completed = new AtomicInteger();

        health.checkAll(Optional.empty(), Optional.empty()).subscribe(first::add, error -> { }, completed::incrementAndGet);
        time.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(probes).containsOnlyKeys(a); // one at a time

        health.checkAll(Optional.of("a"), Optional.empty()).subscribe(second::add, error -> { }, completed::incrementAndGet);
        assertThat(completed).as("generation 1 ends when superseded").hasValue(1);
        time.advanceTimeBy(Duration.ofMinutes(1));

        assertThat(probes.get(a)).as("a is shared, not restarted").hasSize(1);
        assertThat(probes).as("b and c, unstarted in generation 1, are dropped").containsOnlyKeys(a);
        assertThat(first).isEmpty();
        assertThat(second).extracting(HealthEvent::key).containsExactly(a);
        assertThat(second).extracting(HealthEvent::generation).containsExactly(2L);
        assertThat(completed).hasValue(2);
    }

    /** Users' batches are apart: bob's batch supersedes nothing of alice's, and a check both want is shared. */
    @Test
    void anotherUsersBatchSupersedesNothingOfTheFirstOnes() {
        startInVirtualTime(new HealthProperties(null, 1, LINGER));
        ConnectionKey a = connection("a");
        ConnectionKey b = connection("b");
        ConnectionKey c = connection("c");
        List<HealthEvent> alices = new CopyOnWriteArrayList<>();
        List<HealthEvent> bobs = new CopyOnWriteArrayList<>();
        AtomicInteger completed = new AtomicInteger();

        health.checkAll(Optional.empty(), Optional.empty()).contextWrite(Principals.as(member("alice")))
                .subscribe(alices::add, error -> { }, completed::incrementAndGet);
        time.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(probes).containsOnlyKeys(a); // one at a time
        health.checkAll(Optional.empty(), Optional.empty()).contextWrite(Principals.as(member("bob")))
                .subscribe(bobs::add, error -> { }, completed::incrementAndGet);
        assertThat(completed).as("alice's batch is not superseded by bob's").hasValue(0);
        time.advanceTimeBy(Duration.ofMinutes(1));

        assertThat(alices).extracting(HealthEvent::key).containsExactlyInAnyOrder(a, b, c);
        assertThat(bobs).extracting(HealthEvent::key).containsExactlyInAnyOrder(a, b, c);
        assertThat(probes.values()).as("what both want is probed once").allSatisfy(started -> assertThat(started).hasSize(1));
        assertThat(completed).hasValue(2);
    }

    private static Principal member(String subject) {
        return new Principal(Principal.DEFAULT_TENANT, subject, Role.MEMBER, Via.API_TOKEN, null, null);
    }

    @Test
    void generationChecksAtMostConcurrencyConnectionsAtOnce() {
        startInVirtualTime(new HealthProperties(null, 2, LINGER));
        List<ConnectionKey> keys = List.of(connection("a"), connection("b"), connection("c"), connection("d"), connection("e"));
        List<HealthEvent> events = new CopyOnWriteArrayList<>();

        health.checkAll(Optional.empty(), Optional.empty()).subscribe(events::add);
        assertThat(probes).hasSize(2);
        time.advanceTimeBy(ANSWER);
        assertThat(probes).hasSize(4);
        assertThat(events).hasSize(2);
        time.advanceTimeBy(ANSWER.multipliedBy(2));

        assertThat(events).extracting(HealthEvent::key).containsExactlyInAnyOrderElementsOf(keys);
        assertThat(events).allSatisfy(event -> assertThat(event.generation()).isEqualTo(1L));
        assertThat(probes.values()).allSatisfy(started -> assertThat(started).hasSize(1));
    }

    /**
     * Beside other replicas, a batch checks a connection a peer owns at that peer, which stores and announces the
     * verdict: no probe here, nothing stored or announced here twice. An owner that does not answer gives the batch
     * an {@code unknown} verdict that is kept nowhere. A single check reaches this service only once the API has
     * routed it here, and probes here.
     */
    @Test
    void batchChecksAPeersConnectionAtItsOwnerAndKeepsNoCopyOfItsVerdict() {
        ConnectionKey mine = connection("mine");
        ConnectionKey theirs = connection("theirs");
        ConnectionKey silent = connection("silent");
        HealthVerdict ownersVerdict = HealthVerdict.degraded(42, "checked by the owner");
        OwnerChecks peers = (key, here) -> key.equals(mine) ? Optional.empty()
                : key.equals(theirs) ? Optional.of(Mono.delay(ANSWER).thenReturn(ownersVerdict))
                : Optional.of(Mono.error(new IllegalStateException("replica ghost001 did not answer")));
        time = VirtualTimeScheduler.getOrSet();
        health = new HealthService(pool, stores.connections(), new HealthProperties(null, null, LINGER), clock, registry, peers);
        health.start();
        List<HealthEvent> announced = new CopyOnWriteArrayList<>();
        List<HealthEvent> batch = new CopyOnWriteArrayList<>();
        Disposable listening = health.events().subscribe(announced::add);

        health.checkAll(Optional.empty(), Optional.empty()).subscribe(batch::add);
        time.advanceTimeBy(ANSWER.multipliedBy(2));

        assertThat(probes).as("pinged here").containsOnlyKeys(mine);
        assertThat(batch).hasSize(3);
        assertThat(verdictOf(batch, mine).status()).isEqualTo("healthy");
        assertThat(verdictOf(batch, theirs)).isEqualTo(ownersVerdict);
        assertThat(verdictOf(batch, silent).status()).isEqualTo("unknown");
        assertThat(verdictOf(batch, silent).detail()).hasValueSatisfying(detail -> assertThat(detail).contains("ghost001 did not answer"));
        assertThat(announced).extracting(HealthEvent::key).as("announced here: this replica's own verdicts").containsExactly(mine);
        assertThat(stores.connections().find(theirs).block(STUCK).lastHealth()).as("the owner stores its verdict").isEmpty();
        assertThat(stores.connections().find(silent).block(STUCK).lastHealth()).isEmpty();
        assertThat(counter("owner")).isEqualTo(2.0);
        listening.dispose();
    }

    /**
     * A check the API routed here (a peer that takes this replica for the owner sent it) is probed here, and never
     * joins this replica's check of that connection at that peer: two replicas whose lease snapshots differ for a
     * heartbeat would wait on each other for good.
     */
    @Test
    void aCheckAPeerAsksForIsProbedHereAndNeverJoinsOneSentToThatPeer() {
        ConnectionKey theirs = connection("theirs");
        OwnerChecks waitingOnThePeer = (key, here) -> Optional.of(Mono.never());
        time = VirtualTimeScheduler.getOrSet();
        health = new HealthService(pool, stores.connections(), new HealthProperties(null, null, LINGER), clock, registry,
                waitingOnThePeer);
        health.start();
        List<HealthVerdict> routedHere = new CopyOnWriteArrayList<>();

        Disposable batch = health.checkAll(Optional.empty(), Optional.empty()).subscribe();
        health.check(theirs, Optional.empty()).subscribe(routedHere::add);
        time.advanceTimeBy(ANSWER);

        assertThat(probes).as("pinged here").containsOnlyKeys(theirs);
        assertThat(routedHere).extracting(HealthVerdict::status).containsExactly("healthy");
        batch.dispose();
    }

    private static HealthVerdict verdictOf(List<HealthEvent> events, ConnectionKey key) {
        return events.stream().filter(event -> event.key().equals(key)).findFirst().orElseThrow().verdict();
    }

    /** Real threads, no virtual time: askers that join just as a probe ends must still get a verdict. */
    @Test
    void everyJoinerGetsAVerdictEvenWhenItJoinsAsTheProbeEnds() {
        doAnswer(call -> Mono.delay(Duration.ofNanos(50_000)).then()).when(pool).withSession(any(), any(Duration.class), any());
        health = new HealthService(pool, stores.connections(), new HealthProperties(null, null, LINGER), clock, registry, OwnerChecks.LOCAL);
        ConnectionKey key = connection("racy");

        for (int round = 0; round < 300; round++) {
            List<HealthVerdict> verdicts = Flux.range(0, 30)
                    .flatMap(i -> health.check(key, Optional.empty()), 30)
                    .collectList()
                    .block(STUCK);
            assertThat(verdicts).as("round " + round).hasSize(30);
        }
    }

    private ConnectionKey connection(String integration) {
        ConnectionKey key = ConnectionKey.org(integration, "main");
        stores.integrations().create(new Integration(integration, integration, "", new StdioConfig("true", null, null, null),
                Instant.EPOCH))
                .then(stores.connections().create(new Connection(key, "none", Optional.empty(), Optional.empty()), Map.of()))
                .block(STUCK);
        return key;
    }

    private double counter(String outcome) {
        return registry.find("tether.health.checks").tag("outcome", outcome).counters().stream().mapToDouble(c -> c.count()).sum();
    }
}
