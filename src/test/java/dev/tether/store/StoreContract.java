package dev.tether.store;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What every store must do, run against each real database: embedded H2 and PostgreSQL. Subclasses say
 * where the database is; each test gets an empty one.
 */
abstract class StoreContract {

    private static final Duration BOUND = Duration.ofSeconds(20);

    /** A migrated, empty database for one test. */
    protected record Database(String jdbcUrl, String r2dbcUrl, String user, String password) {
    }

    protected abstract Database newDatabase();

    private R2dbcStore open(Database database) {
        Flyway.configure().dataSource(database.jdbcUrl(), database.user(), database.password()).load().migrate();
        ConnectionFactory factory = ConnectionFactories.get(io.r2dbc.spi.ConnectionFactoryOptions.parse(database.r2dbcUrl())
                .mutate()
                .option(io.r2dbc.spi.ConnectionFactoryOptions.USER, database.user())
                .option(io.r2dbc.spi.ConnectionFactoryOptions.PASSWORD, database.password())
                .build());
        return new R2dbcStore(DatabaseClient.create(factory), new R2dbcTransactionManager(factory), JsonMapper.builder().build());
    }

    private static Integration stdio(String slug) {
        return new Integration(slug, "Server " + slug, "a server",
                new StdioConfig("node", List.of("server.js", "--flag"), Map.of("TOKEN", "t0k3n"), "/tmp"),
                Instant.ofEpochMilli(1_700_000_000_000L));
    }

    /** An integration with one connection, as a user makes them: first the one, then the other. */
    private static void created(R2dbcStore store, Integration integration, Connection connection) {
        store.create(integration).block(BOUND);
        store.create(connection, Map.of()).block(BOUND);
    }

    private static Connection connection(String integration, String name) {
        return new Connection(new ConnectionKey(Owner.ORG, integration, name), "none", Optional.empty(), Optional.empty());
    }

    @Test
    void integrationAndConnectionSurviveReopening() {
        Database database = newDatabase();
        R2dbcStore store = open(database);
        created(store, stdio("alpha"), connection("alpha", "default"));

        R2dbcStore reopened = open(database);
        assertThat(reopened.find("alpha").block(BOUND)).isEqualTo(stdio("alpha"));
        assertThat(reopened.find(new ConnectionKey(Owner.ORG, "alpha", "default")).block(BOUND)).isNotNull();
    }

    @Test
    void remoteConfigRoundTrips() {
        R2dbcStore store = open(newDatabase());
        Integration remote = new Integration("remote", "Remote", "", new RemoteConfig("http://127.0.0.1:1/mcp",
                RemoteConfig.RemoteTransport.SSE, Map.of("q", "1"), Map.of("X-Key", "k")), Instant.ofEpochMilli(5));
        created(store, remote, connection("remote", "default"));
        assertThat(store.find("remote").block(BOUND)).isEqualTo(remote);
    }

    @Test
    void duplicateSlugIsRefusedAndLosesNothing() {
        R2dbcStore store = open(newDatabase());
        created(store, stdio("alpha"), connection("alpha", "default"));
        Integration other = new Integration("alpha", "Other", "", new StdioConfig("other", List.of(), Map.of(), null), Instant.EPOCH);

        assertThatThrownBy(() -> store.create(other).block(BOUND))
                .isInstanceOf(IntegrationAlreadyExistsException.class);
        assertThat(store.find("alpha").block(BOUND)).isEqualTo(stdio("alpha"));
        assertThat(store.all(Optional.of("alpha"), Optional.empty()).collectList().block(BOUND))
                .extracting(c -> c.key().name()).containsExactly("default");
    }

    @Test
    void concurrentCreatesOfOneSlugHaveOneWinner() {
        R2dbcStore store = open(newDatabase());
        AtomicInteger conflicts = new AtomicInteger();
        List<Integration> winners = Flux.range(0, 8)
                .flatMap(i -> store.create(stdio("race"))
                        .onErrorResume(IntegrationAlreadyExistsException.class, ex -> {
                            conflicts.incrementAndGet();
                            return Mono.empty();
                        }))
                .collectList().block(BOUND);
        assertThat(winners).hasSize(1);
        assertThat(conflicts).hasValue(7);
    }

    @Test
    void connectionOfUnknownIntegrationIsRefusedAndNotWritten() {
        R2dbcStore store = open(newDatabase());
        Connection orphan = connection("missing", "x");
        assertThatThrownBy(() -> store.create(orphan, Map.of("K", "v")).block(BOUND))
                .isInstanceOf(IntegrationNotFoundException.class);
        assertThat(store.find(orphan.key()).block(BOUND)).isNull();
        assertThat(store.credentials(orphan.key()).block(BOUND)).isEmpty();
    }

    @Test
    void duplicateConnectionIsRefusedAndKeepsTheFirstCredentials() {
        R2dbcStore store = open(newDatabase());
        created(store, stdio("alpha"), connection("alpha", "default"));
        Connection mine = connection("alpha", "mine");
        store.create(mine, Map.of("TOKEN", "first")).block(BOUND);

        assertThatThrownBy(() -> store.create(mine, Map.of("TOKEN", "second")).block(BOUND))
                .isInstanceOf(ConnectionAlreadyExistsException.class);
        assertThat(store.credentials(mine.key()).block(BOUND)).containsExactly(Map.entry("TOKEN", "first"));
    }

    @Test
    void credentialsAreKeptApartAndReplacedWhole() {
        R2dbcStore store = open(newDatabase());
        created(store, stdio("alpha"), connection("alpha", "default"));
        Connection mine = connection("alpha", "mine");
        store.create(mine, Map.of("A", "1", "B", "2")).block(BOUND);

        store.update(new Connection(mine.key(), "none", Optional.of("me"), Optional.empty()), Optional.of(Map.of("C", "3"))).block(BOUND);

        assertThat(store.credentials(mine.key()).block(BOUND)).containsExactly(Map.entry("C", "3"));
        assertThat(store.find(mine.key()).block(BOUND).identityLabel()).contains("me");
    }

    @Test
    void verdictsAndCatalogsPersist() {
        Database database = newDatabase();
        R2dbcStore store = open(database);
        created(store, stdio("alpha"), connection("alpha", "default"));
        ConnectionKey key = new ConnectionKey(Owner.ORG, "alpha", "default");
        StoredTool tool = new StoredTool("echo", "echo", "Echoes", true, Map.of("type", "object"), null);

        store.saveHealth(key, HealthVerdict.degraded(42, "MCP server 'alpha' exited with code 1")).block(BOUND);
        store.saveCatalog(key, new StoredCatalog(List.of(tool), Instant.ofEpochMilli(7))).block(BOUND);

        R2dbcStore reopened = open(database);
        assertThat(reopened.find(key).block(BOUND).lastHealth()).contains(HealthVerdict.degraded(42, "MCP server 'alpha' exited with code 1"));
        assertThat(reopened.catalog(key).block(BOUND)).isEqualTo(new StoredCatalog(List.of(tool), Instant.ofEpochMilli(7)));
    }

    @Test
    void deletingAnIntegrationRemovesEverythingOfIt() {
        R2dbcStore store = open(newDatabase());
        created(store, stdio("alpha"), connection("alpha", "default"));
        ConnectionKey mine = new ConnectionKey(Owner.USER, "alpha", "mine");
        store.create(new Connection(mine, "none", Optional.empty(), Optional.empty()), Map.of("K", "v")).block(BOUND);
        store.saveCatalog(mine, new StoredCatalog(List.of(), Instant.EPOCH)).block(BOUND);

        assertThat(store.delete("alpha").block(BOUND)).isTrue();

        assertThat(store.find(mine).block(BOUND)).isNull();
        assertThat(store.credentials(mine).block(BOUND)).isEmpty();
        assertThat(store.catalog(mine).block(BOUND)).isNull();
        assertThat(store.delete("alpha").block(BOUND)).isFalse();
    }
    @Test
    void policiesRoundTripInExecutorsListOrder() {
        R2dbcStore store = open(newDatabase());
        Instant at = Instant.ofEpochSecond(1_700_000_000L);
        Policy org = new Policy("pol_org", Owner.ORG, "everything.*", PolicyAction.REQUIRE_APPROVAL, "a0", at, at);
        Policy orgFirst = new Policy("pol_org2", Owner.ORG, "everything.org.default.echo", PolicyAction.BLOCK, "Zz", at, at);
        Policy user = new Policy("pol_user", Owner.USER, "*", PolicyAction.APPROVE, "a0", at, at);
        Flux.just(org, orgFirst, user).concatMap(store::create).blockLast(BOUND);

        assertThat(store.policies().collectList().block(BOUND)).containsExactly(user, orgFirst, org);
        assertThat(store.find(Owner.USER, "pol_org").blockOptional(BOUND)).as("another owner's policy").isEmpty();

        Policy changed = new Policy("pol_org", Owner.ORG, "everything.org.*", PolicyAction.APPROVE, "a1", at, at.plusSeconds(5));
        assertThat(store.update(changed).block(BOUND)).isEqualTo(changed);
        assertThat(store.find(Owner.ORG, "pol_org").block(BOUND)).isEqualTo(changed);
        assertThat(store.update(new Policy("pol_none", Owner.ORG, "*", PolicyAction.BLOCK, "a0", at, at)).blockOptional(BOUND)).isEmpty();

        assertThat(store.delete(Owner.USER, "pol_org").block(BOUND)).isFalse();
        assertThat(store.delete(Owner.ORG, "pol_org").block(BOUND)).isTrue();
        assertThat(store.policies().map(Policy::id).collectList().block(BOUND)).containsExactly("pol_user", "pol_org2");
    }

}
