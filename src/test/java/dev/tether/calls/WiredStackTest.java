package dev.tether.calls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import reactor.core.publisher.Flux;

import dev.tether.catalog.CatalogService;
import dev.tether.health.HealthService;
import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.identity.Via;
import dev.tether.session.PoolHarness;
import dev.tether.session.SessionPool;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionStore;
import dev.tether.store.HealthVerdict;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationStore;
import dev.tether.store.Owner;
import dev.tether.store.StdioConfig;
import dev.tether.testsupport.OsProcesses;

/**
 * The same stack as Spring wires it: the lifecycle beans are started, the services share one pool, and the
 * meters land in the application's registry. A storm of checks, a sync and a call on one connection cost one
 * spawn (counted by the fixture itself and by {@code tether.children.spawned}).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE, properties = "tether.docker.reap-interval=1h")
@DirtiesContext
class WiredStackTest {

    private static final Duration BOUND = Duration.ofSeconds(20);
    private static final Path DATA_DIR = temporaryDirectory();
    private static final String RUN = UUID.randomUUID().toString().substring(0, 12);

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @Autowired
    HealthService health;
    @Autowired
    CatalogService catalog;
    @Autowired
    ToolCalls calls;
    @Autowired
    SessionPool pool;
    @Autowired
    IntegrationStore integrations;
    @Autowired
    ConnectionStore connections;
    @Autowired
    MeterRegistry registry;

    @AfterEach
    void leaveNothingBehind() {
        pool.retire("wired").block(BOUND);
        try {
            OsProcesses.awaitNoneMatching("--run=" + RUN, Duration.ofSeconds(15));
        }
        finally {
            OsProcesses.matching("--run=" + RUN).forEach(ProcessHandle::destroyForcibly);
        }
    }

    @AfterAll
    static void removeDataDir() throws IOException {
        try (Stream<Path> tree = Files.walk(DATA_DIR)) {
            tree.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    @Test
    void checksSyncAndCallOfOneConnectionShareOneSpawn() {
        Path spawns = DATA_DIR.resolve("spawns-wired");
        List<String> command = PoolHarness.loggedFixture(spawns, DATA_DIR.resolve("record-wired"), RUN);
        ConnectionKey key = ConnectionKey.user(Principal.LOCAL_SUBJECT, "wired", "main");
        integrations.create(new Integration("wired", "wired", "", new StdioConfig(command.get(0), command.subList(1, command.size()),
                null, null), Instant.now()))
                .then(connections.create(new Connection(key, "none", Optional.empty(), Optional.empty()), Map.of())).block(BOUND);
        double spawnedBefore = count("tether.children.spawned");
        double coalescedBefore = count("tether.health.checks", "outcome", "coalesced");
        assertThat(health.isRunning()).isTrue();
        assertThat(catalog.isRunning()).isTrue();

        List<HealthVerdict> verdicts = Flux.range(0, 100)
                .flatMap(i -> health.check(key, Optional.empty()), 100)
                .collectList().block(BOUND);
        int tools = catalog.refresh(key).block(BOUND).tools().size();
        // A personal connection is named by its user: the call runs as the daemon's single user, as the API's would.
        String echoed = ((TextContent) calls.call(key.address() + ".echo", Map.of("text", "wired"))
                .contextWrite(Principals.as(Principal.local(Principal.DEFAULT_TENANT, Via.DAEMON_TOKEN))).block(BOUND).result().content().get(0)).text();

        assertThat(verdicts).hasSize(100).allSatisfy(verdict -> assertThat(verdict.status()).isEqualTo("healthy"));
        assertThat(tools).isEqualTo(8);
        assertThat(echoed).isEqualTo("wired");
        assertThat(lines(spawns)).as("spawns logged by the fixture").hasSize(1);
        assertThat(count("tether.children.spawned") - spawnedBefore).isEqualTo(1.0);
        assertThat(count("tether.health.checks", "outcome", "coalesced") - coalescedBefore).isEqualTo(99.0);
        assertThat(connections.find(key).block(BOUND).lastHealth()).map(HealthVerdict::status).contains("healthy");
        await().atMost(BOUND).until(() -> OsProcesses.matching("--run=" + RUN).size() == 1);
    }

    private double count(String name, String... tags) {
        return registry.find(name).tags(tags).counters().stream().mapToDouble(Counter::count).sum();
    }

    private static List<String> lines(Path file) {
        try {
            return Files.exists(file) ? Files.readAllLines(file) : List.of();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static Path temporaryDirectory() {
        try {
            return Files.createTempDirectory("tether-wired-");
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
