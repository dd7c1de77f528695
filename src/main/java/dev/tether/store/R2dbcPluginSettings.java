package dev.tether.store;

import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

/** {@link PluginSettings} in the {@code plugin_setting} table, each value sealed with the {@link SecretBox}. */
@Component
final class R2dbcPluginSettings implements PluginSettings {

    private final DatabaseClient db;
    private final TransactionalOperator transaction;
    private final SecretBox secrets;

    R2dbcPluginSettings(DatabaseClient db, ReactiveTransactionManager transactions, SecretBox secrets) {
        this.db = db;
        this.transaction = TransactionalOperator.create(transactions);
        this.secrets = secrets;
    }

    @Override
    public Mono<String> get(String plugin, String name) {
        // 'user' sorts after 'org': DESC reads the user's value first.
        return db.sql("SELECT setting FROM plugin_setting WHERE plugin = :plugin AND name = :name ORDER BY owner DESC")
                .bind("plugin", plugin)
                .bind("name", name)
                .map(row -> secrets.open(row.get("setting", String.class)))
                .all()
                .next();
    }

    @Override
    public Mono<Void> put(String plugin, Owner owner, String name, String value) {
        Mono<Long> remove = db.sql("DELETE FROM plugin_setting WHERE plugin = :plugin AND owner = :owner AND name = :name")
                .bind("plugin", plugin).bind("owner", owner.wire()).bind("name", name)
                .fetch().rowsUpdated();
        Mono<Long> insert = db.sql("INSERT INTO plugin_setting (plugin, owner, name, setting) VALUES (:plugin, :owner, :name, :setting)")
                .bind("plugin", plugin).bind("owner", owner.wire()).bind("name", name).bind("setting", secrets.seal(value))
                .fetch().rowsUpdated();
        return remove.then(insert).as(transaction::transactional).then();
    }

    @Override
    public Mono<Void> delete(String plugin, Owner owner, String name) {
        return db.sql("DELETE FROM plugin_setting WHERE plugin = :plugin AND owner = :owner AND name = :name")
                .bind("plugin", plugin).bind("owner", owner.wire()).bind("name", name)
                .fetch().rowsUpdated().then();
    }
}
