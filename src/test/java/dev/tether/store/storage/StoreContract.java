package dev.tether.store.storage;

import dev.tether.identity.Principal;
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

import dev.tether.store.Connection;
import dev.tether.store.ConnectionAlreadyExistsException;
import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationAlreadyExistsException;
import dev.tether.store.IntegrationNotFoundException;
import dev.tether.store.Owner;
import dev.tether.store.Policy;
import dev.tether.store.PolicyAction;
import dev.tether.store.RemoteConfig;
import dev.tether.store.StdioConfig;
import dev.tether.store.StoredCatalog;
import dev.tether.store.StoredTool;
import dev.tether.store.leases.InstanceLeases;
import dev.tether.store.leases.TestLeases;
import dev.tether.store.secrets.SecretBox;
import dev.tether.store.secrets.SecretSlot;
import dev.tether.store.secrets.SecretsAtRest;
import dev.tether.store.secrets.TestSecrets;

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

    /** One key per test, as one daemon has one key for its store. */
    private final byte[] key = new java.security.SecureRandom().generateSeed(32);
    private final SecretBox secrets = TestSecrets.box(key, "the test's key");

    private R2dbcStore open(Database database) {
        ConnectionFactory factory = migratedFactory(database);
        return new R2dbcStore(DatabaseClient.create(factory), new R2dbcTransactionManager(factory), JsonMapper.builder().build(), secrets);
    }

    /**
     * Migrated as a daemon migrates: V42 and V59 (Java migrations, which a daemon registers as beans) in their places
     * among the SQL ones. A fresh database has no values for V42 to seal again, so any key does.
     */
    private static ConnectionFactory migratedFactory(Database database) {
        Flyway.configure().dataSource(database.jdbcUrl(), database.user(), database.password())
                .javaMigrations(javaMigrations(TestSecrets.random())).load().migrate();
        return TestStores.asTheDaemonHasIt(ConnectionFactories.get(io.r2dbc.spi.ConnectionFactoryOptions.parse(database.r2dbcUrl())
                .mutate()
                .option(io.r2dbc.spi.ConnectionFactoryOptions.USER, database.user())
                .option(io.r2dbc.spi.ConnectionFactoryOptions.PASSWORD, database.password())
                .build()));
    }

    /** The daemon's Java migrations, V42 sealing with {@code box}'s key. */
    private static org.flywaydb.core.api.migration.JavaMigration[] javaMigrations(SecretBox box) {
        return new org.flywaydb.core.api.migration.JavaMigration[] { TestSecrets.bindSecretsToRows(box), new V59__AuditSequenceCache() };
    }

    // ---- secrets at rest ------------------------------------------------------------------

    private static final String ENV_SECRET = "env-secret-4b1d";
    private static final String HEADER_SECRET = "header-secret-9c2e";
    private static final String QUERY_SECRET = "query-secret-7f3a";
    private static final String CREDENTIAL_SECRET = "credential-secret-5e8d";

    @Test
    void secretValuesAreStoredEncryptedAndReadBackPlain() throws Exception {
        Database database = newDatabase();
        R2dbcStore store = open(database);
        Integration stdio = withSecrets(store);

        String raw = dump(database);
        assertThat(raw).as("the store as a dump of every table shows").contains("ENV_TOKEN", TestSecrets.PREFIX)
                .doesNotContain(ENV_SECRET, HEADER_SECRET, QUERY_SECRET, CREDENTIAL_SECRET);
        assertThat(rawFiles(database)).as("the database's own files")
                .doesNotContain(ENV_SECRET, HEADER_SECRET, QUERY_SECRET, CREDENTIAL_SECRET);

        R2dbcStore reopened = open(database);
        assertThat(reopened.find("alpha").block(BOUND)).isEqualTo(stdio);
        assertThat(((RemoteConfig) reopened.find("remote").block(BOUND).config()).headers()).containsEntry("X-Key", HEADER_SECRET);
        assertThat(((RemoteConfig) reopened.find("remote").block(BOUND).config()).queryParams()).containsEntry("key", QUERY_SECRET);
        assertThat(reopened.credentials(ConnectionKey.user(Principal.LOCAL_SUBJECT, "alpha", "alice")).block(BOUND))
                .containsEntry("API_TOKEN", CREDENTIAL_SECRET);
    }

    @Test
    void plainValuesWrittenByAnOlderTetherAreEncryptedOnStartAndStillWork() throws Exception {
        Database database = newDatabase();
        // The schema of a Tether from before V42 sealed values to their rows.
        asBeforeV42(database);
        try (java.sql.Connection jdbc = jdbc(database)) {
            jdbc.createStatement().execute("INSERT INTO integration (slug, name, description, config, config_changed_at, created_at) "
                    + "VALUES ('alpha', 'Alpha', '', '{\"transport\":\"stdio\",\"command\":\"node\",\"args\":[],"
                    + "\"env\":{\"ENV_TOKEN\":\"" + ENV_SECRET + "\"},\"cwd\":null}', 1, 1)");
            jdbc.createStatement().execute("INSERT INTO integration (slug, name, description, config, config_changed_at, created_at) "
                    + "VALUES ('remote', 'Remote', '', '{\"transport\":\"remote\",\"endpoint\":\"http://127.0.0.1:1/mcp\","
                    + "\"remoteTransport\":\"auto\",\"queryParams\":{\"key\":\"" + QUERY_SECRET + "\"},"
                    + "\"headers\":{\"X-Key\":\"" + HEADER_SECRET + "\"}}', 1, 1)");
            jdbc.createStatement().execute("INSERT INTO connection (owner, integration, name, template, created_at) "
                    + "VALUES ('user', 'alpha', 'alice', 'API_TOKEN', 1)");
            jdbc.createStatement().execute("INSERT INTO credential (owner, integration, connection, name, secret) "
                    + "VALUES ('user', 'alpha', 'alice', 'API_TOKEN', '" + CREDENTIAL_SECRET + "')");
        }
        assertThat(dump(database)).as("what the old code left").contains(ENV_SECRET, CREDENTIAL_SECRET);

        migrateSecrets(database, secrets);
        String migrated = dump(database);
        assertThat(migrated).doesNotContain(ENV_SECRET, HEADER_SECRET, QUERY_SECRET, CREDENTIAL_SECRET);
        migrateSecrets(database, secrets);
        assertThat(dump(database)).as("a second start changes nothing").isEqualTo(migrated);

        R2dbcStore store = open(database);
        assertThat(((StdioConfig) store.find("alpha").block(BOUND).config()).env()).containsEntry("ENV_TOKEN", ENV_SECRET);
        RemoteConfig remote = (RemoteConfig) store.find("remote").block(BOUND).config();
        assertThat(remote.headers()).containsEntry("X-Key", HEADER_SECRET);
        assertThat(remote.queryParams()).containsEntry("key", QUERY_SECRET);
        assertThat(store.credentials(ConnectionKey.user(Principal.LOCAL_SUBJECT, "alpha", "alice")).block(BOUND))
                .containsEntry("API_TOKEN", CREDENTIAL_SECRET);
    }

    @Test
    void aWrongKeyStopsTheStartWithOneLineNamingTheKeysSourceAndNoValue() {
        Database database = newDatabase();
        withSecrets(open(database));
        SecretBox other = TestSecrets.box(new byte[32], "tether.store.secret-key");
        assertThatThrownBy(() -> migrateSecrets(database, other))
                .satisfies(error -> {
                    dev.tether.daemon.StartupFailure failure = dev.tether.daemon.StartupFailure.in(error).orElseThrow();
                    assertThat(failure.getMessage()).contains("tether.store.secret-key").doesNotContain("\n")
                            .doesNotContain(ENV_SECRET, HEADER_SECRET, QUERY_SECRET, CREDENTIAL_SECRET);
                    assertThat(failure.getStackTrace()).isEmpty();
                });
    }

    @Test
    void valuesThatLookSealedAreSealedAndSurviveARestart() throws Exception {
        Database database = newDatabase();
        R2dbcStore store = open(database);
        String env = TestSecrets.LEGACY_PREFIX + "AAAA" + ENV_SECRET;
        String credential = TestSecrets.PREFIX + CREDENTIAL_SECRET;
        store.create(new Integration("alpha", "Alpha", "", new StdioConfig("node", List.of(), Map.of("ENV_TOKEN", env), null),
                Instant.ofEpochMilli(1))).block(BOUND);
        ConnectionKey alice = ConnectionKey.user(Principal.LOCAL_SUBJECT, "alpha", "alice");
        store.create(new Connection(alice, "API_TOKEN", Optional.empty(), Optional.empty()), Map.of("API_TOKEN", credential))
                .block(BOUND);
        assertThat(dump(database)).doesNotContain(ENV_SECRET, CREDENTIAL_SECRET);

        migrateSecrets(database, secrets);
        R2dbcStore restarted = open(database);
        assertThat(((StdioConfig) restarted.find("alpha").block(BOUND).config()).env()).containsEntry("ENV_TOKEN", env);
        assertThat(restarted.credentials(alice).block(BOUND)).containsEntry("API_TOKEN", credential);
    }

    @Test
    void aSealedValueCopiedToAnotherRowDoesNotOpen() throws Exception {
        Database database = newDatabase();
        R2dbcStore store = withStore(database);
        ConnectionKey bob = ConnectionKey.user(Principal.LOCAL_SUBJECT, "alpha", "bob");
        store.create(new Connection(bob, "API_TOKEN", Optional.empty(), Optional.empty()), Map.of("API_TOKEN", "bobs-own"))
                .block(BOUND);
        try (java.sql.Connection jdbc = jdbc(database)) {
            jdbc.createStatement().execute("UPDATE credential SET secret = (SELECT secret FROM credential WHERE connection = "
                    + "'alice') WHERE connection = 'bob'");
        }
        assertThatThrownBy(() -> store.credentials(bob).block(BOUND))
                .isInstanceOf(TestSecrets.WRONG_KEY)
                .hasMessageContaining("credential user/alpha/bob API_TOKEN").hasMessageNotContaining(CREDENTIAL_SECRET);
        assertThat(store.credentials(ConnectionKey.user(Principal.LOCAL_SUBJECT, "alpha", "alice")).block(BOUND))
                .as("in its own row it still opens").containsEntry("API_TOKEN", CREDENTIAL_SECRET);
        assertThatThrownBy(() -> migrateSecrets(database, secrets)).satisfies(error -> assertThat(
                dev.tether.daemon.StartupFailure.in(error).orElseThrow().getMessage()).contains("credential user/alpha/bob API_TOKEN"));
    }

    @Test
    void aSealedEnvValueMovedToAnotherNameDoesNotOpen() throws Exception {
        Database database = newDatabase();
        R2dbcStore store = open(database);
        store.create(new Integration("alpha", "Alpha", "", new StdioConfig("node", List.of(),
                Map.of("A", "first", "B", "second"), null), Instant.ofEpochMilli(1))).block(BOUND);
        try (java.sql.Connection jdbc = jdbc(database)) {
            java.sql.ResultSet row = jdbc.createStatement().executeQuery("SELECT config FROM integration");
            row.next();
            Map<String, Object> config = JsonMapper.builder().build().readValue(row.getString(1), Map.class);
            @SuppressWarnings("unchecked") Map<String, String> env = (Map<String, String>) config.get("env");
            env.put("B", env.get("A"));
            java.sql.PreparedStatement update = jdbc.prepareStatement("UPDATE integration SET config = ?");
            update.setString(1, JsonMapper.builder().build().writeValueAsString(config));
            update.executeUpdate();
        }
        assertThatThrownBy(() -> store.find("alpha").block(BOUND)).isInstanceOf(TestSecrets.WRONG_KEY)
                .hasMessageContaining("integration alpha env.B");
    }

    @Test
    void valuesSealedTheOldWayAreBoundToTheirRowsOnce() throws Exception {
        Database database = newDatabase();
        // The schema of a Tether from before V42 sealed values to their rows.
        asBeforeV42(database);
        String passedThrough = TestSecrets.LEGACY_PREFIX + "not-sealed-" + ENV_SECRET;
        try (java.sql.Connection jdbc = jdbc(database)) {
            jdbc.createStatement().execute("INSERT INTO integration (slug, name, description, config, config_changed_at, created_at) "
                    + "VALUES ('alpha', 'Alpha', '', '{\"transport\":\"stdio\",\"command\":\"node\",\"args\":[],"
                    + "\"env\":{\"ENV_TOKEN\":\"" + legacySeal(HEADER_SECRET) + "\",\"ODD\":\"" + passedThrough
                    + "\"},\"cwd\":null}', 1, 1)");
            jdbc.createStatement().execute("INSERT INTO connection (owner, integration, name, template, created_at) "
                    + "VALUES ('user', 'alpha', 'alice', 'API_TOKEN', 1)");
            jdbc.createStatement().execute("INSERT INTO credential (owner, integration, connection, name, secret) "
                    + "VALUES ('user', 'alpha', 'alice', 'API_TOKEN', '" + legacySeal(CREDENTIAL_SECRET) + "')");
        }
        migrateSecrets(database, secrets);
        String migrated = dump(database);
        assertThat(migrated).doesNotContain(TestSecrets.LEGACY_PREFIX, HEADER_SECRET, CREDENTIAL_SECRET, ENV_SECRET);

        R2dbcStore store = open(database);
        assertThat(((StdioConfig) store.find("alpha").block(BOUND).config()).env())
                .containsEntry("ENV_TOKEN", HEADER_SECRET).containsEntry("ODD", passedThrough);
        assertThat(store.credentials(ConnectionKey.user(Principal.LOCAL_SUBJECT, "alpha", "alice")).block(BOUND))
                .containsEntry("API_TOKEN", CREDENTIAL_SECRET);
        migrateSecrets(database, secrets);
        assertThat(dump(database)).as("the migration runs once").isEqualTo(migrated);
    }

    /** V56 gives every row a subject: an older Tether's user rows are the single user's, {@code local}; org rows have none. */
    @Test
    void theRowsOfAnOlderTethersSingleUserBecomeLocalsWithTheirSecretsStillOpening() throws Exception {
        Database database = newDatabase();
        Flyway.configure().dataSource(database.jdbcUrl(), database.user(), database.password())
                .javaMigrations(javaMigrations(secrets)).target("52").load().migrate();
        try (java.sql.Connection jdbc = jdbc(database)) {
            jdbc.createStatement().execute("INSERT INTO integration (slug, name, description, config, config_changed_at, created_at) "
                    + "VALUES ('alpha', 'Alpha', '', '{\"transport\":\"stdio\",\"command\":\"node\",\"args\":[],\"cwd\":null}', 1, 1)");
            jdbc.createStatement().execute("INSERT INTO connection (owner, integration, name, template, created_at) "
                    + "VALUES ('user', 'alpha', 'alice', 'API_TOKEN', 1), ('org', 'alpha', 'shared', 'none', 1)");
            // sealed as the code before V56 sealed it: bound to user/alpha/alice, the text that row's key still has
            jdbc.createStatement().execute("INSERT INTO credential (owner, integration, connection, name, secret) VALUES ('user', "
                    + "'alpha', 'alice', 'API_TOKEN', '" + secrets.seal(CREDENTIAL_SECRET, SecretSlot.credential(
                            ConnectionKey.user(Principal.LOCAL_SUBJECT, "alpha", "alice"), "API_TOKEN")) + "')");
            jdbc.createStatement().execute("INSERT INTO catalog (owner, integration, connection, synced_at, tools) "
                    + "VALUES ('user', 'alpha', 'alice', 1, '[]')");
            jdbc.createStatement().execute("INSERT INTO policy (id, owner, pattern, action, position, created_at, updated_at) "
                    + "VALUES ('pol_u', 'user', '*', 'block', 'a0', 1, 1), ('pol_o', 'org', '*', 'approve', 'a0', 1, 1)");
            jdbc.createStatement().execute("INSERT INTO oauth_client (owner, slug, grant_type, authorization_url, token_url, client_id, "
                    + "origin_kind, created_at) VALUES ('user', 'app', 'authorization_code', 'https://a/authorize', 'https://a/token', "
                    + "'id', 'manual', 1)");
        }
        migrateSecrets(database, secrets);
        try (java.sql.Connection jdbc = jdbc(database)) {
            for (String[] query : List.of(new String[] { "SELECT owner, subject FROM connection ORDER BY owner", "org:|user:local|" },
                    new String[] { "SELECT owner, subject FROM credential", "user:local|" },
                    new String[] { "SELECT owner, subject FROM catalog", "user:local|" },
                    new String[] { "SELECT owner, subject FROM policy ORDER BY owner", "org:|user:local|" },
                    new String[] { "SELECT owner, subject FROM oauth_client", "user:local|" })) {
                StringBuilder found = new StringBuilder();
                try (java.sql.ResultSet rows = jdbc.createStatement().executeQuery(query[0])) {
                    while (rows.next()) {
                        found.append(rows.getString(1)).append(':').append(rows.getString(2)).append('|');
                    }
                }
                assertThat(found.toString()).as(query[0]).isEqualTo(query[1]);
            }
        }
        R2dbcStore after = open(database);
        assertThat(after.credentials(ConnectionKey.user(Principal.LOCAL_SUBJECT, "alpha", "alice")).block(BOUND))
                .containsEntry("API_TOKEN", CREDENTIAL_SECRET);
        assertThat(after.catalog(ConnectionKey.user(Principal.LOCAL_SUBJECT, "alpha", "alice")).block(BOUND)).isNotNull();
        assertThat(after.find(ConnectionKey.org("alpha", "shared")).block(BOUND)).isNotNull();
    }

    @Test
    void aPlainValueWrittenAfterTheMigrationStopsTheStartNamingItsRow() throws Exception {
        Database database = newDatabase();
        withStore(database);
        migrateSecrets(database, secrets);
        try (java.sql.Connection jdbc = jdbc(database)) {
            jdbc.createStatement().execute("UPDATE credential SET secret = '" + CREDENTIAL_SECRET + "' WHERE connection = 'alice'");
        }
        assertThatThrownBy(() -> migrateSecrets(database, secrets)).satisfies(error -> assertThat(
                dev.tether.daemon.StartupFailure.in(error).orElseThrow().getMessage())
                .contains("credential user/alpha/alice API_TOKEN", "not encrypted").doesNotContain(CREDENTIAL_SECRET));
        assertThatThrownBy(() -> open(database).credentials(ConnectionKey.user(Principal.LOCAL_SUBJECT, "alpha", "alice")).block(BOUND))
                .isInstanceOf(TestSecrets.UNSEALED);
    }

    private R2dbcStore withStore(Database database) {
        R2dbcStore store = open(database);
        withSecrets(store);
        return store;
    }

    /** What a Tether before row binding wrote: AES-GCM with this test's key and no associated data. */
    private String legacySeal(String plain) throws Exception {
        byte[] nonce = new java.security.SecureRandom().generateSeed(12);
        javax.crypto.Cipher cipher = javax.crypto.Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(javax.crypto.Cipher.ENCRYPT_MODE, new javax.crypto.spec.SecretKeySpec(key, "AES"),
                new javax.crypto.spec.GCMParameterSpec(128, nonce));
        byte[] sealed = cipher.doFinal(plain.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return TestSecrets.LEGACY_PREFIX + java.util.Base64.getEncoder().encodeToString(
                java.nio.ByteBuffer.allocate(12 + sealed.length).put(nonce).put(sealed).array());
    }

    private Integration withSecrets(R2dbcStore store) {
        Integration stdio = new Integration("alpha", "Alpha", "", new StdioConfig("node", List.of("server.js"),
                Map.of("ENV_TOKEN", ENV_SECRET), null), Instant.ofEpochMilli(1));
        store.create(stdio).then(store.create(connection("alpha", "default"), Map.of())).block(BOUND);
        store.create(new Connection(ConnectionKey.user(Principal.LOCAL_SUBJECT, "alpha", "alice"), "API_TOKEN", Optional.empty(),
                Optional.empty()), Map.of("API_TOKEN", CREDENTIAL_SECRET)).block(BOUND);
        store.create(new Integration("remote", "Remote", "", new RemoteConfig("http://127.0.0.1:1/mcp",
                RemoteConfig.RemoteTransport.AUTO, Map.of("key", QUERY_SECRET), Map.of("X-Key", HEADER_SECRET)),
                Instant.ofEpochMilli(1))).then(store.create(connection("remote", "default"), Map.of())).block(BOUND);
        return stdio;
    }

    /**
     * The schema of a Tether from before V42: its migrations up to V41, as that Tether ran them (it had no baseline
     * script, which Flyway would otherwise run on this empty store whatever the target).
     */
    private static void asBeforeV42(Database database) {
        Flyway.configure().dataSource(database.jdbcUrl(), database.user(), database.password())
                .configuration(Map.of("flyway.baselineMigrationPrefix", "NoBaseline")).target("41").load().migrate();
    }

    /** A start's migration, as the daemon's: {@link StoreMigration} with Flyway configured as the daemon has it. */
    private static void migrateSecrets(Database database, SecretBox box) throws java.io.IOException {
        migrate(database, box, new FlywayRuns());
    }

    private static void migrate(Database database, SecretBox box, FlywayRuns runs) throws java.io.IOException {
        dev.tether.daemon.TetherProperties tether = new dev.tether.daemon.TetherProperties(java.nio.file.Files.createTempDirectory("tether-secrets"));
        SecretsAtRest secretsAtRest = TestSecrets.atRest(box, tether);
        new StoreMigration(secretsAtRest).migrate(Flyway.configure().dataSource(database.jdbcUrl(), database.user(), database.password())
                .javaMigrations(javaMigrations(box))
                .callbacks(secretsAtRest, runs).load());
    }

    /** Counts Flyway's migrate runs on a store: a callback Flyway calls before each. */
    private static final class FlywayRuns implements org.flywaydb.core.api.callback.Callback {
        private final AtomicInteger runs = new AtomicInteger();

        @Override
        public boolean supports(org.flywaydb.core.api.callback.Event event, org.flywaydb.core.api.callback.Context context) {
            return event == org.flywaydb.core.api.callback.Event.BEFORE_MIGRATE;
        }

        @Override
        public boolean canHandleInTransaction(org.flywaydb.core.api.callback.Event event, org.flywaydb.core.api.callback.Context context) {
            return true;
        }

        @Override
        public void handle(org.flywaydb.core.api.callback.Event event, org.flywaydb.core.api.callback.Context context) {
            runs.incrementAndGet();
        }

        @Override
        public String getCallbackName() {
            return "flyway-runs";
        }

        int count() {
            return runs.get();
        }
    }

    // ---- a start's migration ---------------------------------------------------------------

    /**
     * The audit table's numbers come from a sequence that, on the embedded store, saves thousands at a time (V59); on
     * PostgreSQL, where a cache is per connection and would number events out of order, it keeps saving each.
     */
    @Test
    void theAuditSequenceCachesNumbersOnTheEmbeddedStoreOnly() throws Exception {
        Database database = newDatabase();
        open(database);
        try (java.sql.Connection jdbc = jdbc(database); java.sql.Statement statement = jdbc.createStatement()) {
            boolean embedded = jdbc.getMetaData().getDatabaseProductName().equals("H2");
            try (java.sql.ResultSet cache = statement.executeQuery(embedded
                    ? "SELECT IDENTITY_CACHE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'AUDIT_EVENT' AND COLUMN_NAME = 'SEQ'"
                    : "SELECT cache_size FROM pg_sequences WHERE schemaname = current_schema() AND sequencename = 'audit_event_seq_seq'")) {
                assertThat(cache.next()).as("the audit table's sequence").isTrue();
                assertThat(cache.getLong(1)).isEqualTo(embedded ? V59__AuditSequenceCache.CACHE : 1);
            }
        }
    }

    @Test
    void theNewestMigrationIsTheOneAStartTakesForUpToDate() throws Exception {
        Database database = newDatabase();
        open(database);
        try (java.sql.Connection jdbc = jdbc(database)) {
            assertThat(StoreMigration.newestApplied(jdbc, Flyway.configure().load().getConfiguration()))
                    .as("StoreMigration.NEWEST must name the newest migration in db/migration").isEqualTo(StoreMigration.NEWEST);
        }
    }

    @Test
    void anUpToDateStoreIsNotHandedToFlywayAndItsSecretsAreStillChecked() throws Exception {
        Database database = newDatabase();
        withSecrets(open(database));
        FlywayRuns runs = new FlywayRuns();
        migrate(database, secrets, runs);
        assertThat(runs.count()).isZero();
        SecretBox other = TestSecrets.box(new byte[32], "tether.store.secret-key");
        assertThatThrownBy(() -> migrate(database, other, runs))
                .satisfies(error -> assertThat(dev.tether.daemon.StartupFailure.in(error)).isPresent());
        assertThat(runs.count()).isZero();
    }

    @Test
    void aStoreBehindIsMigratedByFlyway() throws Exception {
        Database database = newDatabase();
        Flyway.configure().dataSource(database.jdbcUrl(), database.user(), database.password())
                .javaMigrations(javaMigrations(secrets)).target("56").load().migrate();
        FlywayRuns runs = new FlywayRuns();
        migrate(database, secrets, runs);
        assertThat(runs.count()).isOne();
        try (java.sql.Connection jdbc = jdbc(database)) {
            assertThat(StoreMigration.newestApplied(jdbc, Flyway.configure().load().getConfiguration())).isEqualTo(StoreMigration.NEWEST);
        }
    }

    /** A store a newer Tether migrated: Flyway's to judge, as before (by default it warns and goes on). */
    @Test
    void aStoreAheadOfThisBuildIsHandedToFlyway() throws Exception {
        Database database = newDatabase();
        open(database);
        history(database, "99");
        FlywayRuns runs = new FlywayRuns();
        migrate(database, secrets, runs);
        assertThat(runs.count()).isOne();
    }

    @Test
    void aStoreWithAFailedMigrationIsRefusedAsFlywayRefusesIt() throws Exception {
        Database database = newDatabase();
        open(database);
        try (java.sql.Connection jdbc = jdbc(database)) {
            jdbc.createStatement().execute("UPDATE \"flyway_schema_history\" SET \"success\" = false WHERE \"version\" = '"
                    + StoreMigration.NEWEST.getVersion() + "'");
        }
        assertThatThrownBy(() -> migrate(database, secrets, new FlywayRuns()))
                .isInstanceOf(org.flywaydb.core.api.exception.FlywayValidateException.class).hasMessageContaining("failed");
    }

    /** A row of the schema history, as a newer Tether's migration would have left it. */
    private static void history(Database database, String version) throws java.sql.SQLException {
        try (java.sql.Connection jdbc = jdbc(database)) {
            jdbc.createStatement().execute("INSERT INTO \"flyway_schema_history\" (\"installed_rank\", \"version\", \"description\", "
                    + "\"type\", \"script\", \"checksum\", \"installed_by\", \"execution_time\", \"success\") VALUES (1000, '" + version
                    + "', 'newer', 'SQL', 'V" + version + "__newer.sql', 0, 'test', 1, true)");
        }
    }

    private static java.sql.Connection jdbc(Database database) throws java.sql.SQLException {
        return java.sql.DriverManager.getConnection(database.jdbcUrl(), database.user(), database.password());
    }

    /** Every row of every table, as {@code SELECT *} shows it: what a database dump holds. */
    private static String dump(Database database) throws java.sql.SQLException {
        StringBuilder dump = new StringBuilder();
        try (java.sql.Connection jdbc = jdbc(database)) {
            for (String table : List.of("integration", "connection", "credential", "catalog")) {
                try (java.sql.ResultSet rows = jdbc.createStatement().executeQuery("SELECT * FROM " + table + " ORDER BY 1, 2")) {
                    int columns = rows.getMetaData().getColumnCount();
                    while (rows.next()) {
                        for (int i = 1; i <= columns; i++) {
                            dump.append(rows.getString(i)).append('|');
                        }
                        dump.append('\n');
                    }
                }
            }
        }
        return dump.toString();
    }

    /** The bytes of the database's files where it has files of its own here (embedded H2), after a checkpoint. */
    private static String rawFiles(Database database) throws Exception {
        if (!database.jdbcUrl().startsWith("jdbc:h2:file:")) {
            return "";
        }
        try (java.sql.Connection jdbc = jdbc(database)) {
            jdbc.createStatement().execute("CHECKPOINT SYNC");
        }
        java.nio.file.Path dir = java.nio.file.Path.of(database.jdbcUrl().substring("jdbc:h2:file:".length())).getParent();
        StringBuilder raw = new StringBuilder();
        try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.list(dir)) {
            for (java.nio.file.Path file : files.toList()) {
                raw.append(new String(java.nio.file.Files.readAllBytes(file), java.nio.charset.StandardCharsets.ISO_8859_1));
            }
        }
        assertThat(raw.length()).as("H2 wrote its file").isGreaterThan(0);
        return raw.toString();
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
        return new Connection(ConnectionKey.org(integration, name), "none", Optional.empty(), Optional.empty());
    }

    @Test
    void integrationAndConnectionSurviveReopening() {
        Database database = newDatabase();
        R2dbcStore store = open(database);
        created(store, stdio("alpha"), connection("alpha", "default"));

        R2dbcStore reopened = open(database);
        assertThat(reopened.find("alpha").block(BOUND)).isEqualTo(stdio("alpha"));
        assertThat(reopened.find(ConnectionKey.org("alpha", "default")).block(BOUND)).isNotNull();
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

    /** Ten rounds: a race is lost by chance, and the lost one answered "created" for a row another caller wrote. */
    @Test
    void concurrentCreatesOfOneConnectionHaveOneWinnerWhoseCredentialsAreKept() {
        R2dbcStore store = open(newDatabase());
        store.create(stdio("race")).block(BOUND);
        for (int round = 0; round < 10; round++) {
            Connection contested = connection("race", "round-" + round);
            List<String> winners = Flux.range(0, 10)
                    .flatMap(i -> store.create(contested, Map.of("K", "value " + i)).thenReturn("value " + i)
                            .onErrorResume(ConnectionAlreadyExistsException.class, ex -> Mono.empty()))
                    .collectList().block(BOUND);
            assertThat(winners).as("round %d", round).hasSize(1);
            assertThat(store.credentials(contested.key()).block(BOUND)).as("round %d: the winner's credentials", round)
                    .isEqualTo(Map.of("K", winners.get(0)));
        }
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
        ConnectionKey key = ConnectionKey.org("alpha", "default");
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
        ConnectionKey mine = ConnectionKey.user(Principal.LOCAL_SUBJECT, "alpha", "mine");
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
        R2dbcPolicies store = new R2dbcPolicies(DatabaseClient.create(migratedFactory(newDatabase())));
        Instant at = Instant.ofEpochSecond(1_700_000_000L);
        Policy org = new Policy("pol_org", Owner.ORG, "", "everything.*", PolicyAction.REQUIRE_APPROVAL, "a0", at, at);
        Policy orgFirst = new Policy("pol_org2", Owner.ORG, "", "everything.org.default.echo", PolicyAction.BLOCK, "Zz", at, at);
        Policy user = new Policy("pol_user", Owner.USER, Principal.LOCAL_SUBJECT, "*", PolicyAction.APPROVE, "a0", at, at);
        Flux.just(org, orgFirst, user).concatMap(store::create).blockLast(BOUND);

        assertThat(store.policies().collectList().block(BOUND)).containsExactly(user, orgFirst, org);
        assertThat(store.find(Owner.USER, Principal.LOCAL_SUBJECT, "pol_org").blockOptional(BOUND)).as("another owner's policy").isEmpty();

        Policy changed = new Policy("pol_org", Owner.ORG, "", "everything.org.*", PolicyAction.APPROVE, "a1", at, at.plusSeconds(5));
        assertThat(store.update(changed).block(BOUND)).isEqualTo(changed);
        assertThat(store.find(Owner.ORG, "", "pol_org").block(BOUND)).isEqualTo(changed);
        assertThat(store.update(new Policy("pol_none", Owner.ORG, "", "*", PolicyAction.BLOCK, "a0", at, at)).blockOptional(BOUND)).isEmpty();

        assertThat(store.delete(Owner.USER, Principal.LOCAL_SUBJECT, "pol_org").block(BOUND)).isFalse();
        assertThat(store.delete(Owner.ORG, "", "pol_org").block(BOUND)).isTrue();
        assertThat(store.policies().map(Policy::id).collectList().block(BOUND)).containsExactly("pol_user", "pol_org2");
    }

    @Test
    void anExpiredLeaseIsClaimedByExactlyOneReplicaAndALiveOneByNone() {
        ConnectionFactory factory = migratedFactory(newDatabase());
        InstanceLeases a = TestLeases.of(DatabaseClient.create(factory));
        InstanceLeases b = TestLeases.of(DatabaseClient.create(factory));
        Instant now = Instant.ofEpochSecond(1_700_000_000L);
        Instant until = now.plusSeconds(15);
        InstanceLeases.Lease dead = new InstanceLeases.Lease("dead0001", "host-a", now.minusSeconds(60), now.minusSeconds(1));
        InstanceLeases.Lease live = new InstanceLeases.Lease("live0001", "host-b", now.minusSeconds(60), now.plusSeconds(10));
        assertThat(a.renew(dead).block(BOUND)).as("written anew").isFalse();
        assertThat(b.renew(live).block(BOUND)).isFalse();
        assertThat(b.renew(live).block(BOUND)).as("extended").isTrue();
        assertThat(a.standing().map(InstanceLeases.Lease::instance).collectList().block(BOUND))
                .as("a lease that ran out stands until a peer takes its replica for dead").containsExactlyInAnyOrder("dead0001", "live0001");

        assertThat(a.expired(now).map(InstanceLeases.Lease::instance).collectList().block(BOUND)).containsExactly("dead0001");
        assertThat(b.expired(now).collectList().block(BOUND)).containsExactly(dead);
        assertThat(a.claim(live, "peer-a", now, until).block(BOUND)).as("a live lease is nobody's to claim").isFalse();

        List<String> winners = Flux.merge(a.claim(dead, "peer-a", now, until).filter(won -> won).map(won -> "peer-a"),
                b.claim(dead, "peer-b", now, until).filter(won -> won).map(won -> "peer-b"),
                a.claim(dead, "peer-c", now, until).filter(won -> won).map(won -> "peer-c")).collectList().block(BOUND);
        assertThat(winners).as("three claims at once").hasSize(1);
        String claimer = winners.get(0);
        assertThat(a.standing().map(InstanceLeases.Lease::instance).collectList().block(BOUND))
                .as("a claimed replica is taken for dead; a live one stands").containsExactly("live0001");
        assertThat(a.expired(now).collectList().block(BOUND)).as("claimed, kept until its containers are gone")
                .containsExactly(new InstanceLeases.Lease("dead0001", "host-a", dead.startedAt(), dead.expiresAt(), false, true));
        assertThat(b.claim(dead, claimer, now.plusSeconds(5), until).block(BOUND)).as("the claimer takes it again to retry").isTrue();
        assertThat(b.claim(dead, "peer-x", now.plusSeconds(5), until).block(BOUND)).as("while the claim runs").isFalse();
        assertThat(b.reaped("dead0001", "peer-x", until).block(BOUND)).as("nobody else's to finish").isFalse();

        a.unclaim("dead0001", claimer).block(BOUND);
        assertThat(b.expired(now).map(InstanceLeases.Lease::claimed).collectList().block(BOUND))
                .as("given back after a failure, still taken for dead").containsExactly(true);
        assertThat(b.claim(dead, "peer-x", now.plusSeconds(5), until).block(BOUND)).as("given back after a failure").isTrue();
        assertThat(a.claim(dead, claimer, until.plusSeconds(1), until.plusSeconds(16)).block(BOUND))
                .as("a claim whose claimer went silent runs out").isTrue();
        assertThat(a.takenForDead("dead0001").block(BOUND)).as("claimed").isTrue();
        assertThat(a.reaped("dead0001", "peer-x", until).block(BOUND)).as("the claim moved on").isFalse();
        Instant buried = until.plusSeconds(60);
        assertThat(a.reaped("dead0001", claimer, buried).block(BOUND)).isTrue();
        assertThat(a.expired(now.plusSeconds(3600)).map(InstanceLeases.Lease::instance).collectList().block(BOUND))
                .as("a tombstone is reaped already").containsExactly("live0001");
        assertThat(b.claim(dead, "peer-y", buried.plusSeconds(1), buried.plusSeconds(16)).block(BOUND))
                .as("nor claimed again, however long ago its claim ran out").isFalse();
        assertThat(a.tombstones().collectList().block(BOUND)).containsExactly(new InstanceLeases.Tombstone("dead0001", buried));
        assertThat(a.takenForDead("dead0001").block(BOUND)).as("a tombstone").isTrue();
        a.bury("dead0001", buried).block(BOUND);
        assertThat(a.tombstones().collectList().block(BOUND)).as("not before its end").hasSize(1);
        a.bury("dead0001", buried.plusMillis(1)).block(BOUND);
        assertThat(a.tombstones().collectList().block(BOUND)).as("buried after its end").isEmpty();
        assertThat(a.takenForDead("dead0001").block(BOUND)).as("no row at all").isFalse();

        InstanceLeases.Lease back = new InstanceLeases.Lease("back0001", "host-c", now.minusSeconds(60), now.minusSeconds(1));
        a.renew(back).block(BOUND);
        assertThat(b.claim(back, "peer-b", now, until).block(BOUND)).isTrue();
        InstanceLeases.Lease renewed = new InstanceLeases.Lease("back0001", "host-c", now, now.plusSeconds(15));
        assertThat(a.renew(renewed).block(BOUND)).as("a replica taken for dead that comes back writes its lease anew").isFalse();
        assertThat(a.takenForDead("back0001").block(BOUND)).as("back").isFalse();
        assertThat(b.reaped("back0001", "peer-b", until).block(BOUND)).as("and keeps it").isFalse();
        assertThat(b.tombstones().collectList().block(BOUND)).isEmpty();
        assertThat(a.standing().map(InstanceLeases.Lease::instance).collectList().block(BOUND)).contains("back0001");

        a.release("live0001").block(BOUND);
        assertThat(b.expired(now.plusSeconds(3600)).map(InstanceLeases.Lease::instance).collectList().block(BOUND))
                .as("released, not left to run out").containsExactly("back0001");
    }

    @Test
    void aDrainingLeaseStaysAliveWithItsMarkThroughRenewalsUntilItIsGivenBack() {
        InstanceLeases leases = TestLeases.of(DatabaseClient.create(migratedFactory(newDatabase())));
        Instant now = Instant.ofEpochSecond(1_700_000_000L);
        leases.renew(new InstanceLeases.Lease("drain001", "host-a:1", now, now.plusSeconds(15))).block(BOUND);
        assertThat(leases.standing().map(InstanceLeases.Lease::draining).collectList().block(BOUND)).containsExactly(false);

        leases.drain("drain001").block(BOUND);
        assertThat(leases.renew(new InstanceLeases.Lease("drain001", "host-a:1", now, now.plusSeconds(30))).block(BOUND))
                .as("extended").isTrue();
        assertThat(leases.standing().collectList().block(BOUND))
                .containsExactly(new InstanceLeases.Lease("drain001", "host-a:1", now, now.plusSeconds(30), true));
        assertThat(leases.expired(now.plusSeconds(20)).collectList().block(BOUND)).as("nobody's to reap").isEmpty();

        leases.release("drain001").block(BOUND);
        assertThat(leases.standing().collectList().block(BOUND)).isEmpty();
    }
}
