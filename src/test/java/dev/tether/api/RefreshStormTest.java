package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.github.dockerjava.api.model.Container;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpMethod;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.tether.testsupport.PrometheusScrape;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.OsProcesses;
import dev.tether.testsupport.RequiresDocker;

/**
 * The bug report's refresh storm, at the HTTP level: several {@code docker run -i --rm} servers (slow to start,
 * deaf to EOF and SIGTERM, the real server-everything) plus a plain one that forks a grandchild; rounds of
 * parallel health checks of every connection, {@code GET /api/tools} syncs and {@code GET /api/connections}
 * polls, most of them abandoned by their client at a random instant. Afterwards the Docker engine holds no
 * container of this instance and the OS no process of this test, within a bound; asked directly, not Tether.
 *
 * <p>Idle sessions retire after 1 s ({@link #IDLE_TTL}), so some rounds meet warm sessions and some start
 * servers while their clients leave, and the pool empties after the storm. The periodic reaper is off, so a container left by a
 * broken teardown cannot be hidden by it. The teardown graces keep their defaults.
 */
@RequiresDocker
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "tether.session.idle-ttl=1s", "tether.docker.reap-interval=1h" })
@DirtiesContext
@InProcess
class RefreshStormTest {

    private static final int ROUNDS = 5;
    private static final double ABORT_SHARE = 0.75;
    private static final int MAX_ABORT_MILLIS = 800;
    private static final Duration IDLE_TTL = Duration.ofSeconds(1);
    /**
     * When the test calls the clean-up stuck: idle TTL (1 s) + the default ladder (1 s + 2 s + 2 s) take seconds, and the
     * periodic reaper is off, so a stranded container stays for ever; how long the clean-up took is printed.
     */
    private static final Duration CLEAN_BOUND = Duration.ofSeconds(60);

    private static final Path DATA_DIR = DataDirs.create("storm");
    private static final String RUN = UUID.randomUUID().toString();
    private static final String RUN_LABEL = "dev.tether.api.run";

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @LocalServerPort
    int port;

    @AfterEach
    void cleanUp() {
        Leftovers.removeContainers("tether.instance", DataDirs.instanceId(DATA_DIR));
        Leftovers.removeContainers(RUN_LABEL, RUN);
        Leftovers.killProcesses(RUN);
        MarkedProcesses.kill(RUN);
    }

    @Test
    void abandonedRequestsOfARefreshStormStrandNoContainerAndNoProcess() throws Exception {
        TetherClient tether = new TetherClient(port, DataDirs.token(DATA_DIR));
        String instance = DataDirs.instanceId(DATA_DIR);
        Path work = Files.createDirectories(DATA_DIR.resolve("work"));
        List<String> runLabel = List.of("--label", RUN_LABEL + "=" + RUN);
        String pidFile = "--pid-file=/tmp/pid-" + RUN; // puts RUN on the command line of the fixture inside the container

        // Every process these servers start inherits the marker: docker run clients, the plain server, its grandchild.
        Map<String, String> marker = Map.of(MarkedProcesses.VARIABLE, RUN);
        List<String> slugs = List.of(
                tether.register("slow", Fixture.dockerCommand(runLabel, "--slow-start=1500", pidFile), marker),
                tether.register("deaf", Fixture.dockerCommand(runLabel, "--ignore-eof", "--ignore-sigterm", pidFile), marker),
                tether.register("slow_deaf", Fixture.dockerCommand(runLabel, "--slow-start=700", "--ignore-eof",
                        "--ignore-sigterm", "--tools=40", "--page-size=7", pidFile), marker),
                tether.register("everything", Fixture.everythingDockerCommand(runLabel), marker),
                tether.register("forker", Fixture.command("--fork-grandchild", "--ignore-eof",
                        "--pid-file=" + work.resolve("forker-" + RUN)), marker));

        long seed = Long.getLong("tether.storm.seed", System.nanoTime());
        Random random = new Random(seed);
        System.out.println("[storm] seed " + seed + " (rerun with -Dtether.storm.seed=" + seed + ")");

        ContainerSampler sampler = new ContainerSampler(instance);
        sampler.start();
        List<CompletableFuture<Outcome>> completing = new ArrayList<>();
        AtomicInteger abortedInFlight = new AtomicInteger();
        AtomicInteger answeredBeforeAbort = new AtomicInteger();
        List<CompletableFuture<Void>> aborts = new ArrayList<>();
        int fired = 0;
        try {
            for (int round = 1; round <= ROUNDS; round++) {
                // Reloads come in bursts: odd rounds hit warm sessions while the last burst runs; even rounds come
                // after the pool went cold, so their servers start while most of their clients leave.
                if (round > 1) {
                    Thread.sleep(round % 2 == 0 ? IDLE_TTL.toMillis() + 1500 : 200 + random.nextInt(400));
                }
                List<Request> requests = new ArrayList<>();
                for (String slug : slugs) {
                    requests.add(new Request("health " + slug, tether.healthLater(slug)));
                    requests.add(new Request("health " + slug, tether.healthLater(slug)));
                }
                for (int i = 0; i < 2; i++) {
                    requests.add(new Request("tools", tether.exchange(HttpMethod.GET, "/api/tools", null)));
                    requests.add(new Request("connections", tether.exchange(HttpMethod.GET, "/api/connections", null)));
                }
                Collections.shuffle(requests, random);
                for (Request request : requests) {
                    fired++;
                    if (random.nextDouble() < ABORT_SHARE) {
                        AtomicBoolean answered = new AtomicBoolean();
                        Disposable inFlight = request.call().subscribe(reply -> {
                            answered.set(true);
                            answeredBeforeAbort.incrementAndGet();
                        }, error -> { });
                        CompletableFuture<Void> aborted = new CompletableFuture<>();
                        aborts.add(aborted);
                        Schedulers.parallel().schedule(() -> {
                            if (!answered.get()) {
                                abortedInFlight.incrementAndGet();
                            }
                            inFlight.dispose(); // closes the connection, as a reloading page does
                            aborted.complete(null);
                        }, random.nextInt(MAX_ABORT_MILLIS), TimeUnit.MILLISECONDS);
                    }
                    else {
                        completing.add(request.call()
                                .map(reply -> new Outcome(request.what(), reply))
                                .timeout(TetherClient.CALL_BOUND)
                                .toFuture());
                    }
                }
            }
            CompletableFuture.allOf(completing.toArray(CompletableFuture[]::new)).get(90, TimeUnit.SECONDS);
        }
        finally {
            // every scheduled abort has fired: waited for, not guessed from the longest delay on a host that may be slow
            CompletableFuture.allOf(aborts.toArray(CompletableFuture[]::new)).get(90, TimeUnit.SECONDS);
        }
        long stormEnded = System.nanoTime();
        int leftAtEnd = DockerContainers.withLabel("tether.instance", instance).size();

        // Nothing stranded, by the Docker engine's and the OS's account; the figures are printed either way.
        AssertionError strandedSomething = null;
        try {
            DockerContainers.awaitNoneWithLabel("tether.instance", instance, CLEAN_BOUND);
            OsProcesses.awaitNoneMatching(RUN, CLEAN_BOUND);
            MarkedProcesses.awaitNone(RUN, CLEAN_BOUND);
        }
        catch (AssertionError failure) {
            strandedSomething = failure;
        }
        long cleanAfter = Duration.ofNanos(System.nanoTime() - stormEnded).toMillis();
        sampler.stop();

        PrometheusScrape metrics = tether.metrics();
        Map<String, Integer> statuses = new TreeMap<>();
        for (CompletableFuture<Outcome> outcome : completing) {
            Outcome done = outcome.get();
            statuses.merge(done.what().split(" ")[0] + " " + done.summary(), 1, Integer::sum);
        }
        int stranded = DockerContainers.withLabel("tether.instance", instance).size();
        System.out.printf("[storm] %d rounds, %d requests: %d abandoned in flight, %d answered before their abort,"
                + " %d let complete %s%n", ROUNDS, fired, abortedInFlight.get(), answeredBeforeAbort.get(), completing.size(), statuses);
        System.out.printf("[storm] containers spawned %.0f (docker children per Tether's counter; %d distinct seen by the engine),"
                + " peak %d at once, %d left when the storm ended, stranded %d (%d ms after the storm)%n",
                metrics.spawned("docker"), sampler.distinct(), sampler.peak(), leftAtEnd, stranded, cleanAfter);
        System.out.printf("[storm] plain children spawned %.0f; health checks: %.0f cancelled, %.0f healthy, %.0f degraded,"
                + " %.0f coalesced; teardowns by rung %s; reaped %.0f%n",
                metrics.spawned("process"), metrics.healthChecks("cancelled"), metrics.healthChecks("healthy"),
                metrics.healthChecks("degraded"), metrics.healthChecks("coalesced"), teardowns(metrics),
                metrics.sum("tether_children_reaped_total"));

        if (strandedSomething != null) {
            throw strandedSomething;
        }
        assertThat(metrics.healthChecks("cancelled")).as("the storm really cancelled health checks").isPositive();
        assertThat(abortedInFlight.get()).as("requests abandoned before their answer").isPositive();
        assertThat(metrics.spawned("docker")).as("containers were started").isPositive();
        assertThat(metrics.sum("tether_children_reaped_total")).as("teardown alone cleaned up, not the reaper").isZero();
        assertThat(completing).allSatisfy(outcome -> assertThat(outcome.get().reply().status())
                .as("%s", outcome.get()).isEqualTo(200));
        assertThat(completing.stream().map(CompletableFuture::join).filter(o -> o.what().startsWith("health")))
                .as("a check the client waited for finds its server healthy")
                .allSatisfy(outcome -> assertThat(outcome.summary()).as("%s", outcome).isEqualTo("healthy"));
        // The ladder may still be waiting out a SIGKILLed grandchild's grace when the OS already lists it gone.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(tether.metrics().live()).as("Tether's own count agrees").isZero());
    }

    private static Map<String, Double> teardowns(PrometheusScrape metrics) {
        Map<String, Double> rungs = new TreeMap<>();
        for (String rung : List.of("eof", "term", "kill", "container")) {
            rungs.put(rung, metrics.sum("tether_children_teardown_total", "rung", rung));
        }
        return rungs;
    }

    private record Request(String what, Mono<TetherClient.Reply> call) {
    }

    private record Outcome(String what, TetherClient.Reply reply) {

        String summary() {
            if (reply.status() != 200) {
                return String.valueOf(reply.status());
            }
            return what.startsWith("health") ? reply.json().get("status").asString() : "200";
        }

        @Override
        public String toString() {
            return what + " -> " + reply;
        }
    }

    /** Counts this instance's containers as the Docker engine lists them, a few times a second. */
    private static final class ContainerSampler {

        private final String instance;
        private final Set<String> seen = ConcurrentHashMap.newKeySet();
        private final AtomicInteger peak = new AtomicInteger();
        private volatile Disposable sampling;

        ContainerSampler(String instance) {
            this.instance = instance;
        }

        void start() {
            sampling = Schedulers.boundedElastic().schedulePeriodically(() -> {
                try {
                    List<Container> now = DockerContainers.withLabel("tether.instance", instance);
                    now.forEach(container -> seen.add(container.getId()));
                    peak.accumulateAndGet(now.size(), Math::max);
                }
                catch (RuntimeException ex) {
                    // a missed sample only lowers the peak
                }
            }, 0, 200, TimeUnit.MILLISECONDS);
        }

        void stop() {
            sampling.dispose();
        }

        int peak() {
            return peak.get();
        }

        int distinct() {
            return seen.size();
        }
    }
}
