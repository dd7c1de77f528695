package dev.tether.store.storage;

import java.util.Optional;

import io.r2dbc.spi.Readable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.r2dbc.core.DatabaseClient.GenericExecuteSpec;
import org.springframework.stereotype.Component;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.identity.NotPermittedException;
import dev.tether.store.Columns;
import dev.tether.store.OAuthClient;
import dev.tether.store.OAuthClientStore;
import dev.tether.store.Owner;
import dev.tether.store.OwnerNames;
import dev.tether.store.secrets.SecretBox;
import dev.tether.store.secrets.SecretSlot;

/** OAuth clients in the {@code oauth_client} table, each client secret sealed to its row, each read and write scoped to the caller ({@link OwnerScope}). */
@Component
final class R2dbcOAuthClients implements OAuthClientStore {

    private final DatabaseClient db;
    private final OwnerScope scope;
    private final TransactionalOperator transaction;
    private final StoreJson json;

    R2dbcOAuthClients(DatabaseClient db, OwnerScope scope, ReactiveTransactionManager transactions, JsonMapper json, SecretBox secrets) {
        this.db = db;
        this.scope = scope;
        this.transaction = TransactionalOperator.create(transactions);
        this.json = new StoreJson(json, secrets);
    }

    private static final String CLIENT_COLUMNS = "owner, subject, slug, grant_type, authorization_url, token_url, client_id, client_secret, "
            + "resource, origin_kind, origin_integration";

    @Override
    public Mono<OAuthClient> saveClient(OAuthClient client) {
        return scope.write(client.owner(), client.subject(), new OwnerScope.Write("oauth_client.save", "save an OAuth app",
                        OwnerNames.of(client.owner(), client.subject()) + "/" + client.slug()),
                caller -> Mono.error(new NotPermittedException(caller, "save another user's OAuth app")), caller -> insert(client));
    }

    private Mono<OAuthClient> insert(OAuthClient client) {
        GenericExecuteSpec insert = db.sql("INSERT INTO oauth_client (" + CLIENT_COLUMNS + ", created_at) VALUES (:owner, :subject, :slug, "
                        + ":grant, :authorizationUrl, :tokenUrl, :clientId, :secret, :resource, :originKind, :originIntegration, :created)")
                .bind("owner", client.owner().wire())
                .bind("subject", client.subject())
                .bind("slug", client.slug())
                .bind("grant", client.grant())
                .bind("authorizationUrl", client.authorizationUrl())
                .bind("tokenUrl", client.tokenUrl())
                .bind("clientId", client.clientId())
                .bind("originKind", client.dynamic() ? "dynamic_client_registration" : "manual")
                .bind("created", System.currentTimeMillis());
        insert = SqlBinds.nullable(insert, "secret", client.clientSecret().map(secret -> json.seal(SecretSlot.oauthClient(client.owner(), client.subject(), client.slug()), secret)), String.class);
        insert = SqlBinds.nullable(insert, "resource", client.resource(), String.class);
        insert = SqlBinds.nullable(insert, "originIntegration", client.originIntegration(), String.class);
        return delete(client.owner(), client.subject(), client.slug())
                .then(insert.fetch().rowsUpdated())
                .thenReturn(client)
                .as(transaction::transactional);
    }

    @Override
    public Mono<OAuthClient> client(Owner owner, String subject, String slug) {
        return OwnerScope.caller().filter(caller -> caller.sees(subject))
                .flatMap(caller -> db.sql("SELECT " + CLIENT_COLUMNS + " FROM oauth_client WHERE owner = :owner AND subject = :subject "
                                + "AND slug = :slug")
                        .bind("owner", owner.wire())
                        .bind("subject", subject)
                        .bind("slug", slug)
                        .map(this::oauthClient)
                        .one());
    }

    @Override
    public Flux<OAuthClient> clients() {
        return OwnerScope.visible(db.sql("SELECT " + CLIENT_COLUMNS + " FROM oauth_client ORDER BY owner, subject, slug")
                .map(this::oauthClient).all(), OAuthClient::subject);
    }

    @Override
    public Mono<Boolean> removeClient(Owner owner, String subject, String slug) {
        return scope.write(owner, subject, new OwnerScope.Write("oauth_client.delete", "remove an OAuth app",
                        OwnerNames.of(owner, subject) + "/" + slug), caller -> Mono.just(false),
                caller -> delete(owner, subject, slug));
    }

    private Mono<Boolean> delete(Owner owner, String subject, String slug) {
        return db.sql("DELETE FROM oauth_client WHERE owner = :owner AND subject = :subject AND slug = :slug")
                .bind("owner", owner.wire())
                .bind("subject", subject)
                .bind("slug", slug)
                .fetch().rowsUpdated().map(rows -> rows > 0);
    }

    private OAuthClient oauthClient(Readable row) {
        Owner owner = Owner.parse(Columns.text(row, "owner")).orElseThrow();
        String subject = Columns.text(row, "subject");
        return new OAuthClient(owner, subject, Columns.text(row, "slug"),
                Columns.text(row, "grant_type"), Columns.text(row, "authorization_url"), Columns.text(row, "token_url"),
                Columns.text(row, "client_id"), Optional.ofNullable(row.get("client_secret", String.class)).map(secret -> json.open(
                        SecretSlot.oauthClient(owner, subject, Columns.text(row, "slug")), secret)),
                Optional.ofNullable(row.get("resource", String.class)),
                "dynamic_client_registration".equals(row.get("origin_kind", String.class)),
                Optional.ofNullable(row.get("origin_integration", String.class)));
    }
}
