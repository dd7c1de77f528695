package dev.tether.session;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;

import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.testcontainers.DockerClientFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.daemon.TetherProperties;
import dev.tether.catalog.CatalogProperties;
import dev.tether.catalog.CatalogService;
import dev.tether.catalog.OwnerSyncs;
import dev.tether.docker.DockerEngine;
import dev.tether.docker.DockerProperties;
import dev.tether.docker.DockerRunRewriter;
import dev.tether.docker.InstanceId;
import dev.tether.health.HealthProperties;
import dev.tether.health.HealthService;
import dev.tether.health.OwnerChecks;
import dev.tether.mcp.McpProperties;
import dev.tether.mcp.McpSessions;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ContainerRemover;
import dev.tether.process.ProcessProperties;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Integration;
import dev.tether.store.Owner;
import dev.tether.store.StdioConfig;
import dev.tether.store.storage.TestStores;
import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.OsProcesses;

/**
 * Tether's session stack wired by hand around real fixture processes: children, MCP sessions, the pool (with a
 * timer of the test's choosing), the in-memory store and, on demand, the health and catalog services.
 *
 * <p>Every fixture it starts carries {@code --run=<id>} unique to the harness, so the OS can be asked about
 * this test's processes only, and is launched through {@code sh -c 'echo $$ >> spawns-<slug>; exec ...'}: the
 * process itself logs each spawn before Tether sees it, a count independent of Tether's own meters. Docker
 * fixtures record their {@code initialize} in a bind-mounted file instead.
 *
 * <p>{@link #close()} tears every session down and fails when a process of the run (or, for Docker, a container
 * of the harness's {@code tether.instance}) is still there after a bound; it kills the leftovers first, so one
 * failing test does not strand anything for the next.
 */
public final class PoolHarness implements AutoCloseable {

    /** How long a store write or a sync may take before the test calls it stuck: only a failure waits for it, on any host's load. */
    private static final Duration STUCK = Duration.ofSeconds(60);

    /** Label on every Docker fixture of a run, for clean-up after a failed test. */
    public static final String RUN_LABEL = "dev.tether.test.run";
    /** The label Tether puts on its containers. */
    public static final String INSTANCE_LABEL = "tether.instance";

    /** When the harness calls its children's teardown stuck at close: only a failure waits this. */
    private static final Duration GONE_BOUND = Duration.ofSeconds(60);

    private final Path dir;
    private final String run = UUID.randomUUID().toString().substring(0, 12);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MutableClock clock = new MutableClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));
    private final TestStores.Stores stores = TestStores.embedded();
    private final boolean docker;
    private final String instanceId;
    private final ChildProcesses children;
    private final McpSessions sessions;
    private final SessionPool pool;
    private final Set<String> slugs = ConcurrentHashMap.newKeySet();
    private final List<Disposable> stoppers = new CopyOnWriteArrayList<>();

    private PoolHarness(Builder builder) {
        this.dir = builder.dir;
        this.docker = builder.docker;
        TetherProperties tether = new TetherProperties(dir);
        InstanceId instance = new InstanceId(tether);
        this.instanceId = instance.value();
        ContainerRemover remover = docker ? new DockerEngine(new DockerProperties(null, null, null), JsonMapper.builder().build())
                : ContainerRemover.NONE;
        this.children = new ChildProcesses(builder.process, tether, remover, registry);
        this.sessions = new McpSessions(children, new DockerRunRewriter(instance), builder.mcp);
        this.pool = new SessionPool(stores.integrations(), stores.connections(), stores.credentials(), sessions, BearerTokens.NONE,
                builder.sessions, registry, builder.timer, builder.fence.apply(children, instance), ObservationRegistry.NOOP);
    }

    public static Builder builder(Path dir) {
        return new Builder(dir);
    }

    // ---- wiring ------------------------------------------------------------------------

    public SessionPool pool() {
        return pool;
    }

    public TestStores.Stores stores() {
        return stores;
    }

    public SimpleMeterRegistry registry() {
        return registry;
    }

    public MutableClock clock() {
        return clock;
    }

    public ChildProcesses children() {
        return children;
    }

    /** The {@code tether.instance} label value of this harness's containers. */
    public String instanceId() {
        return instanceId;
    }

    /** A started health service on this pool; stopped by {@link #close()}. */
    public HealthService health(HealthProperties properties) {
        HealthService health = new HealthService(pool, stores.connections(), properties, clock, registry, OwnerChecks.LOCAL);
        health.start();
        stoppers.add(health::stop);
        return health;
    }

    /** A started catalog service on this pool; stopped by {@link #close()}. */
    public CatalogService catalog(CatalogProperties properties) {
        CatalogService catalog = new CatalogService(pool, stores.integrations(), stores.connections(), stores.catalogs(),
                properties, clock, registry, OwnerSyncs.LOCAL);
        catalog.start();
        stoppers.add(catalog::stop);
        return catalog;
    }

    // ---- servers and connections -------------------------------------------------------

    /** The fixture as a plain child, logging its spawns to {@code spawns-<slug>} and its messages to {@code record-<slug>}. */
    public List<String> fixture(String slug, String... flags) {
        return loggedFixture(spawnLog(slug), recordFile(slug), run, flags);
    }

    /**
     * The fixture as a plain child that appends its pid to {@code spawnLog} as it starts (the shell {@code exec}s
     * the server, so the pid is the server's), records what it receives in {@code record} and carries
     * {@code --run=<run>} for the OS to find it by.
     */
    public static List<String> loggedFixture(Path spawnLog, Path record, String run, String... flags) {
        List<String> command = new ArrayList<>(List.of("/bin/sh", "-c", "echo $$ >> \"$0\"; exec \"$@\"", spawnLog.toString()));
        command.addAll(Fixture.command(flags));
        command.add("--run=" + run);
        command.add("--record=" + record);
        return command;
    }

    /** The fixture in {@code docker run -i --rm}, recording its messages to {@code record-<slug>} through a bind mount. */
    public List<String> dockerFixture(String slug, String... flags) {
        List<String> all = new ArrayList<>(List.of(flags));
        all.add("--run=" + run);
        all.add("--record=/rec/" + recordFile(slug).getFileName());
        return Fixture.dockerCommand(List.of("--label", RUN_LABEL + "=" + run, "-v", dir + ":/rec"), all.toArray(String[]::new));
    }

    /** Registers integration {@code slug} running {@code command}, with one connection {@code org/<slug>/main}. */
    public ConnectionKey connect(String slug, List<String> command) {
        slugs.add(slug);
        ConnectionKey key = ConnectionKey.org(slug, "main");
        stores.integrations().create(integration(slug, command))
                .then(stores.connections().create(new Connection(key, "none", Optional.empty(), Optional.empty()), Map.of()))
                .block(STUCK);
        return key;
    }

    /** The server of integration {@code slug} running {@code command}, not stored: for one-off sessions. */
    public dev.tether.mcp.McpServer server(String slug, List<String> command) {
        slugs.add(slug);
        return IntegrationServers.of(integration(slug, command), Map.of());
    }

    /** Changes the integration's command, one second later on the clock: its catalog becomes stale, its session outdated. */
    public void reconfigure(String slug, List<String> command) {
        clock.advance(Duration.ofSeconds(1));
        stores.integrations().update(integration(slug, command)).block(STUCK);
    }

    private Integration integration(String slug, List<String> command) {
        return new Integration(slug, slug, "", new StdioConfig(command.get(0), command.subList(1, command.size()), Map.of(), null),
                clock.instant());
    }

    /** Holds a lease on the connection's ready session until disposed; fails when the lease is refused. */
    public Disposable hold(ConnectionKey key) {
        CountDownLatch leased = new CountDownLatch(1);
        AtomicReference<Throwable> refused = new AtomicReference<>();
        Disposable lease = pool.withSession(key, session -> Mono.fromRunnable(leased::countDown).then(Mono.never()))
                .subscribe(ignored -> { }, error -> {
                    refused.set(error);
                    leased.countDown();
                });
        try {
            if (!leased.await(GONE_BOUND.toSeconds(), TimeUnit.SECONDS)) {
                fail("no lease of " + key + " within " + GONE_BOUND);
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AssertionError(ex);
        }
        if (refused.get() != null) {
            fail("lease of " + key + " refused", refused.get());
        }
        return lease;
    }

    // ---- what the OS and the servers say -------------------------------------------------

    /** Pids of the plain fixture processes of {@code slug} ever spawned, in order; written by the processes themselves. */
    public List<Long> spawnedPids(String slug) {
        return lines(spawnLog(slug)).stream().map(Long::parseLong).toList();
    }

    public int spawns(String slug) {
        return spawnedPids(slug).size();
    }

    /** Methods the fixture(s) of {@code slug} received, one a line, {@code notifications/cancelled <id>} for cancellations. */
    public List<String> recorded(String slug) {
        return lines(recordFile(slug));
    }

    public long recorded(String slug, String method) {
        return recorded(slug).stream().filter(method::equals).count();
    }

    /** Live processes of this run, asked of the OS. */
    public List<ProcessHandle> liveProcesses() {
        return OsProcesses.matching("--run=" + run);
    }

    /** Total of a counter over the given tags (all its series when none). */
    public double counter(String name, String... tags) {
        return registry.find(name).tags(tags).counters().stream().mapToDouble(Counter::count).sum();
    }

    public Path dir() {
        return dir;
    }

    private Path spawnLog(String slug) {
        return dir.resolve("spawns-" + slug);
    }

    private Path recordFile(String slug) {
        return dir.resolve("record-" + slug);
    }

    private static List<String> lines(Path file) {
        try {
            return Files.exists(file) ? Files.readAllLines(file).stream().filter(line -> !line.isBlank()).toList() : List.of();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    // ---- clean-up ----------------------------------------------------------------------

    /**
     * Stops the services, retires every session and waits for the run's processes (and containers) to be gone;
     * fails, after killing them, when any is left.
     */
    @Override
    public void close() {
        stoppers.forEach(Disposable::dispose);
        slugs.forEach(slug -> pool.retire(slug).block(STUCK));
        AssertionError failure = null;
        try {
            OsProcesses.awaitNoneMatching("--run=" + run, GONE_BOUND);
        }
        catch (AssertionError leftover) {
            failure = leftover;
            liveProcesses().forEach(ProcessHandle::destroyForcibly);
        }
        // Teardowns finish detached (container removal, then the ledger): let them end before the data dir goes.
        long deadline = System.nanoTime() + GONE_BOUND.toNanos();
        while ((!children.live().isEmpty() || !lines(dir.resolve("children.ledger")).isEmpty()) && System.nanoTime() < deadline) {
            sleep(Duration.ofMillis(20));
        }
        if (!children.live().isEmpty() && failure == null) {
            failure = new AssertionError("teardowns still running after " + GONE_BOUND + ": " + children.live());
        }
        if (docker) {
            try {
                DockerContainers.awaitNoneWithLabel(INSTANCE_LABEL, instanceId, GONE_BOUND);
            }
            catch (AssertionError leftover) {
                failure = failure == null ? leftover : failure;
                removeContainers(RUN_LABEL, run);
                removeContainers(INSTANCE_LABEL, instanceId);
            }
        }
        if (failure != null) {
            fail("the test left something behind", failure);
        }
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", ex);
        }
    }

    private static void removeContainers(String key, String value) {
        var client = DockerClientFactory.instance().client();
        for (Container container : DockerContainers.withLabel(key, value)) {
            try {
                client.removeContainerCmd(container.getId()).withForce(true).withRemoveVolumes(true).exec();
            }
            catch (NotFoundException | ConflictException gone) {
                // removed already, or --rm is removing it
            }
        }
    }

    /** How the stack is set up. */
    public static final class Builder {

        private final Path dir;
        private McpProperties mcp = McpProperties.defaults();
        private SessionProperties sessions = SessionProperties.defaults();
        private ProcessProperties process = ProcessProperties.defaults();
        private Scheduler timer = Schedulers.parallel();
        private boolean docker;
        private BiFunction<ChildProcesses, InstanceId, StartFence> fence = (children, instance) -> StartFence.NONE;

        private Builder(Path dir) {
            this.dir = dir;
        }

        public Builder mcp(McpProperties mcp) {
            this.mcp = mcp;
            return this;
        }

        public Builder sessions(SessionProperties sessions) {
            this.sessions = sessions;
            return this;
        }

        public Builder process(ProcessProperties process) {
            this.process = process;
            return this;
        }

        /** The pool's timer (idle eviction): a {@code VirtualTimeScheduler} to drive it by hand. */
        public Builder timer(Scheduler timer) {
            this.timer = timer;
            return this;
        }

        /** Removes containers through the Docker engine on teardown, and checks for leftovers on close. */
        public Builder docker() {
            this.docker = true;
            return this;
        }

        /** What the pool's starts wait for ({@link StartFence}), made from the harness's children and instance id. */
        public Builder fence(BiFunction<ChildProcesses, InstanceId, StartFence> fence) {
            this.fence = fence;
            return this;
        }

        public PoolHarness build() {
            return new PoolHarness(this);
        }
    }

    /** A clock the test moves. */
    public static final class MutableClock extends Clock {

        private volatile Instant now;

        MutableClock(Instant start) {
            this.now = start;
        }

        public void advance(Duration by) {
            now = now.plus(by);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }
}
