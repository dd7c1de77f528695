package dev.tether.store.storage;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import io.r2dbc.spi.Readable;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.r2dbc.core.DatabaseClient.GenericExecuteSpec;
import org.springframework.stereotype.Component;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.store.CatalogStore;
import dev.tether.store.Columns;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionAlreadyExistsException;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionStore;
import dev.tether.store.CredentialStore;
import dev.tether.store.HealthVerdict;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationAlreadyExistsException;
import dev.tether.store.IntegrationNotFoundException;
import dev.tether.store.IntegrationStore;
import dev.tether.store.OAuthGrant;
import dev.tether.store.Owner;
import dev.tether.store.StoredCatalog;
import dev.tether.store.secrets.SecretBox;

/**
 * Integrations, connections, their credentials and catalogs on R2DBC: embedded H2 in the data dir by default,
 * PostgreSQL when configured ({@link R2dbcPolicies} and {@link R2dbcOAuthClients} keep the other tables). Writes that
 * belong together (a connection and its credentials, an integration's removal with all it owns) run in one
 * transaction, so a failure leaves nothing half-written.
 */
@Component
final class R2dbcStore implements IntegrationStore, ConnectionStore, CredentialStore, CatalogStore {

    private static final String CONNECTION_COLUMNS = "owner, subject, integration, name, template, identity_label, health_status, "
            + "health_checked_at, health_detail, oauth_client, oauth_client_owner, oauth_scope, expires_at";

    private final DatabaseClient db;
    private final TransactionalOperator transaction;
    private final StoreJson json;

    R2dbcStore(DatabaseClient db, ReactiveTransactionManager transactions, JsonMapper json, SecretBox secrets) {
        this.db = db;
        this.transaction = TransactionalOperator.create(transactions);
        this.json = new StoreJson(json, secrets);
    }

    // ---- integrations ----------------------------------------------------------------------

    @Override
    public Mono<Integration> create(Integration integration) {
        return insertIntegration(integration)
                .thenReturn(integration)
                .onErrorMap(DataIntegrityViolationException.class, ex -> new IntegrationAlreadyExistsException(integration.slug()));
    }

    @Override
    public Mono<Integration> update(Integration integration) {
        return db.sql("UPDATE integration SET name = :name, description = :description, config = :config, "
                        + "config_changed_at = :changed WHERE slug = :slug")
                .bind("name", integration.name())
                .bind("description", integration.description())
                .bind("config", json.config(integration.slug(), integration.config()))
                .bind("changed", integration.configChangedAt().toEpochMilli())
                .bind("slug", integration.slug())
                .fetch().rowsUpdated()
                .flatMap(rows -> rows == 0 ? Mono.empty() : Mono.just(integration));
    }

    @Override
    public Mono<Integration> find(String slug) {
        return db.sql("SELECT slug, name, description, config, config_changed_at FROM integration WHERE slug = :slug")
                .bind("slug", slug)
                .map(this::integration)
                .one();
    }

    @Override
    public Flux<Integration> all() {
        return db.sql("SELECT slug, name, description, config, config_changed_at FROM integration ORDER BY slug")
                .map(this::integration)
                .all();
    }

    @Override
    public Mono<Boolean> delete(String slug) {
        return db.sql("DELETE FROM integration WHERE slug = :slug").bind("slug", slug)
                .fetch().rowsUpdated().map(rows -> rows > 0);
    }

    // ---- connections -----------------------------------------------------------------------

    @Override
    public Mono<Connection> create(Connection connection, Map<String, String> credentials) {
        return insertConnection(connection)
                .then(insertCredentials(connection.key(), credentials))
                .thenReturn(connection)
                .as(transaction::transactional)
                .onErrorMap(DataIntegrityViolationException.class, ex -> translate(connection.key(), ex));
    }

    @Override
    public Mono<Connection> update(Connection connection, Optional<Map<String, String>> credentials) {
        ConnectionKey key = connection.key();
        Mono<Void> replaceCredentials = credentials
                .map(values -> keyed(db.sql("DELETE FROM credential WHERE owner = :owner AND subject = :subject "
                        + "AND integration = :integration AND connection = :name"), key).then().then(insertCredentials(key, values)))
                .orElse(Mono.empty());
        return keyed(oauthColumns(db.sql("UPDATE connection SET identity_label = :label, oauth_client = :oauthClient, "
                        + "oauth_client_owner = :oauthClientOwner, oauth_scope = :oauthScope, expires_at = :expiresAt "
                        + "WHERE owner = :owner AND subject = :subject AND integration = :integration AND name = :name")
                        .bind("label", connection.identityLabel().orElse("")), connection.oauth()), key)
                .flatMap(rows -> rows == 0 ? Mono.<Connection>empty() : replaceCredentials.then(find(key)))
                .as(transaction::transactional);
    }

    @Override
    public Mono<Connection> find(ConnectionKey key) {
        return bindKey(db.sql("SELECT " + CONNECTION_COLUMNS + " FROM connection WHERE owner = :owner "
                + "AND subject = :subject AND integration = :integration AND name = :name"), key)
                .map(R2dbcStore::connection)
                .one();
    }

    @Override
    public Flux<Connection> all(Optional<String> integration, Optional<Owner> owner) {
        StringBuilder sql = new StringBuilder("SELECT " + CONNECTION_COLUMNS + " FROM connection WHERE 1 = 1");
        integration.ifPresent(i -> sql.append(" AND integration = :integration"));
        owner.ifPresent(o -> sql.append(" AND owner = :owner"));
        GenericExecuteSpec spec = db.sql(sql.append(" ORDER BY integration, owner, subject, name").toString());
        if (integration.isPresent()) {
            spec = spec.bind("integration", integration.get());
        }
        if (owner.isPresent()) {
            spec = spec.bind("owner", owner.get().wire());
        }
        return spec.map(R2dbcStore::connection).all();
    }

    @Override
    public Mono<Boolean> delete(ConnectionKey key) {
        return keyed(db.sql("DELETE FROM connection WHERE owner = :owner AND subject = :subject AND integration = :integration "
                + "AND name = :name"), key)
                .map(rows -> rows > 0);
    }

    @Override
    public Mono<Boolean> saveHealth(ConnectionKey key, HealthVerdict verdict) {
        GenericExecuteSpec spec = db.sql("UPDATE connection SET health_status = :status, health_checked_at = :checked, "
                        + "health_detail = :detail WHERE owner = :owner AND subject = :subject AND integration = :integration AND name = :name")
                .bind("status", verdict.status())
                .bind("checked", verdict.checkedAt());
        spec = verdict.detail().isPresent() ? spec.bind("detail", verdict.detail().get()) : spec.bindNull("detail", String.class);
        return keyed(spec, key).map(rows -> rows > 0);
    }

    /** The database hears of no replica: {@link MemoryStore} does, from the change log. */
    @Override
    public Flux<Connection> verdictsOfPeers() {
        return Flux.empty();
    }

    // ---- credentials -----------------------------------------------------------------------

    @Override
    public Mono<Map<String, String>> credentials(ConnectionKey key) {
        return bindKey(db.sql("SELECT name, secret FROM credential WHERE owner = :owner AND subject = :subject "
                + "AND integration = :integration AND connection = :name ORDER BY name"), key)
                .map(row -> Map.entry(row.get("name", String.class),
                        json.open(key, Columns.text(row, "name"), Columns.text(row, "secret"))))
                .all()
                .collect(LinkedHashMap<String, String>::new, (values, entry) -> values.put(entry.getKey(), entry.getValue()))
                .map(Map::copyOf);
    }

    @Override
    public Flux<CredentialName> names() {
        return db.sql("SELECT owner, subject, integration, connection, name FROM credential "
                        + "ORDER BY owner, subject, integration, connection, name")
                .map(row -> new CredentialName(new ConnectionKey(Owner.parse(Columns.text(row, "owner")).orElseThrow(),
                        Columns.text(row, "integration"), Columns.text(row, "connection"), Columns.text(row, "subject")),
                        Columns.text(row, "name")))
                .all();
    }

    // ---- catalogs --------------------------------------------------------------------------

    @Override
    public Mono<StoredCatalog> catalog(ConnectionKey key) {
        return bindKey(db.sql("SELECT synced_at, tools FROM catalog WHERE owner = :owner AND subject = :subject "
                + "AND integration = :integration AND connection = :name"), key)
                .map(row -> new StoredCatalog(json.tools(Columns.text(row, "tools")),
                        Instant.ofEpochMilli(Columns.number(row, "synced_at"))))
                .one();
    }

    @Override
    public Mono<Void> saveCatalog(ConnectionKey key, StoredCatalog catalog) {
        return keyed(db.sql("DELETE FROM catalog WHERE owner = :owner AND subject = :subject AND integration = :integration "
                + "AND connection = :name"), key)
                .then(keyed(db.sql("INSERT INTO catalog (owner, subject, integration, connection, synced_at, tools) "
                        + "VALUES (:owner, :subject, :integration, :name, :synced, :tools)")
                        .bind("synced", catalog.syncedAt().toEpochMilli())
                        .bind("tools", json.tools(catalog.tools())), key))
                .then()
                .as(transaction::transactional)
                // The connection was deleted while its catalog synced: nothing to keep.
                .onErrorResume(DataIntegrityViolationException.class, ex -> Mono.empty());
    }

    // ---- rows ------------------------------------------------------------------------------

    private Mono<Long> insertIntegration(Integration integration) {
        return db.sql("INSERT INTO integration (slug, name, description, config, config_changed_at, created_at) "
                        + "VALUES (:slug, :name, :description, :config, :changed, :created)")
                .bind("slug", integration.slug())
                .bind("name", integration.name())
                .bind("description", integration.description())
                .bind("config", json.config(integration.slug(), integration.config()))
                .bind("changed", integration.configChangedAt().toEpochMilli())
                .bind("created", integration.configChangedAt().toEpochMilli())
                .fetch().rowsUpdated();
    }

    private Mono<Long> insertConnection(Connection connection) {
        GenericExecuteSpec spec = oauthColumns(db.sql("INSERT INTO connection (owner, subject, integration, name, template, identity_label, "
                        + "oauth_client, oauth_client_owner, oauth_scope, expires_at, created_at) "
                        + "VALUES (:owner, :subject, :integration, :name, :template, :label, :oauthClient, :oauthClientOwner, :oauthScope, "
                        + ":expiresAt, :created)")
                .bind("template", connection.template())
                .bind("created", System.currentTimeMillis()), connection.oauth());
        spec = connection.identityLabel().isPresent() ? spec.bind("label", connection.identityLabel().get())
                : spec.bindNull("label", String.class);
        return keyed(spec, connection.key());
    }

    private Mono<Void> insertCredentials(ConnectionKey key, Map<String, String> values) {
        return Flux.fromIterable(values.entrySet())
                .concatMap(entry -> keyed(db.sql("INSERT INTO credential (owner, subject, integration, connection, name, secret) "
                        + "VALUES (:owner, :subject, :integration, :name, :credential, :secret)")
                        .bind("credential", entry.getKey())
                        .bind("secret", json.seal(key, entry.getKey(), entry.getValue())), key))
                .then();
    }

    private static Mono<Long> keyed(GenericExecuteSpec spec, ConnectionKey key) {
        return bindKey(spec, key).fetch().rowsUpdated();
    }

    private static GenericExecuteSpec bindKey(GenericExecuteSpec spec, ConnectionKey key) {
        return spec.bind("owner", key.owner().wire()).bind("subject", key.subject()).bind("integration", key.integration())
                .bind("name", key.name());
    }

    private Integration integration(Readable row) {
        return new Integration(Columns.text(row, "slug"), Columns.text(row, "name"), Columns.text(row, "description"),
                json.config(Columns.text(row, "slug"), Columns.text(row, "config")),
                Instant.ofEpochMilli(Columns.number(row, "config_changed_at")));
    }

    private static Connection connection(Readable row) {
        ConnectionKey key = new ConnectionKey(Owner.parse(Columns.text(row, "owner")).orElseThrow(),
                Columns.text(row, "integration"), Columns.text(row, "name"), Columns.text(row, "subject"));
        String status = row.get("health_status", String.class);
        Optional<HealthVerdict> health = status == null ? Optional.empty()
                : Optional.of(new HealthVerdict(status, Columns.number(row, "health_checked_at"),
                        Optional.ofNullable(row.get("health_detail", String.class))));
        String label = row.get("identity_label", String.class);
        String client = row.get("oauth_client", String.class);
        Optional<OAuthGrant> oauth = client == null ? Optional.empty()
                : Optional.of(new OAuthGrant(client, Owner.parse(row.get("oauth_client_owner", String.class)).orElse(Owner.ORG),
                        Optional.ofNullable(row.get("oauth_scope", String.class)), Optional.ofNullable(row.get("expires_at", Long.class))));
        return new Connection(key, Columns.text(row, "template"), Optional.ofNullable(label).filter(l -> !l.isEmpty()), health,
                oauth);
    }

    private static GenericExecuteSpec oauthColumns(GenericExecuteSpec spec, Optional<OAuthGrant> oauth) {
        spec = SqlBinds.nullable(spec, "oauthClient", oauth.map(OAuthGrant::client), String.class);
        spec = SqlBinds.nullable(spec, "oauthClientOwner", oauth.map(grant -> grant.clientOwner().wire()), String.class);
        spec = SqlBinds.nullable(spec, "oauthScope", oauth.flatMap(OAuthGrant::scope), String.class);
        return SqlBinds.nullable(spec, "expiresAt", oauth.flatMap(OAuthGrant::expiresAt), Long.class);
    }

    /** A key clash is a duplicate connection; a missing parent is an unknown integration. */
    private static RuntimeException translate(ConnectionKey key, DataIntegrityViolationException ex) {
        String message = String.valueOf(ex.getMessage()).toLowerCase();
        return message.contains("foreign") || message.contains("referential") || message.contains("violates foreign key")
                ? new IntegrationNotFoundException(key.integration())
                : new ConnectionAlreadyExistsException(key);
    }
}
