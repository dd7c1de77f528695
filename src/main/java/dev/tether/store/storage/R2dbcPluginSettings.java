package dev.tether.store.storage;

import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

import dev.tether.store.Columns;
import dev.tether.store.Owner;
import dev.tether.store.OwnerNames;
import dev.tether.store.PluginSettings;
import dev.tether.store.secrets.SecretBox;
import dev.tether.store.secrets.SecretSlot;

/**
 * {@link PluginSettings} in the {@code plugin_setting} table, each value sealed with the {@link SecretBox}: the
 * organisation's, and each user's own for that user ({@link OwnerScope}).
 */
@Component
final class R2dbcPluginSettings implements PluginSettings {

    private final DatabaseClient db;
    private final OwnerScope scope;
    private final TransactionalOperator transaction;
    private final SecretBox secrets;

    R2dbcPluginSettings(DatabaseClient db, OwnerScope scope, ReactiveTransactionManager transactions, SecretBox secrets) {
        this.db = db;
        this.scope = scope;
        this.transaction = TransactionalOperator.create(transactions);
        this.secrets = secrets;
    }

    @Override
    public Mono<String> get(String plugin, String name) {
        // 'user' sorts after 'org': DESC reads the user's value first. The daemon's own work has no user: the org's only.
        return OwnerScope.caller().flatMap(caller -> db.sql("SELECT owner, subject, setting FROM plugin_setting WHERE plugin = :plugin "
                        + "AND name = :name AND (owner = 'org' OR subject = :subject) ORDER BY owner DESC")
                .bind("plugin", plugin)
                .bind("name", name)
                .bind("subject", caller.daemon() ? "" : caller.subject())
                .map(row -> secrets.open(Columns.text(row, "setting"), SecretSlot.pluginSetting(plugin,
                        Owner.parse(Columns.text(row, "owner")).orElseThrow(), Columns.text(row, "subject"), name)))
                .all()
                .next());
    }

    @Override
    public Mono<Void> put(String plugin, Owner owner, String name, String value) {
        return OwnerScope.caller().map(owner::subjectFor).flatMap(subject -> scope.write(owner, subject,
                new OwnerScope.Write("plugin_setting.put", "change a plugin's settings", plugin + "/" + OwnerNames.of(owner, subject) + "/" + name),
                caller -> Mono.empty(), caller -> {
                    Mono<Long> insert = db.sql("INSERT INTO plugin_setting (plugin, owner, subject, name, setting) "
                                    + "VALUES (:plugin, :owner, :subject, :name, :setting)")
                            .bind("plugin", plugin).bind("owner", owner.wire()).bind("subject", subject).bind("name", name)
                            .bind("setting", secrets.seal(value, SecretSlot.pluginSetting(plugin, owner, subject, name)))
                            .fetch().rowsUpdated();
                    return remove(plugin, owner, subject, name).then(insert).as(transaction::transactional).then();
                }));
    }

    @Override
    public Mono<Void> delete(String plugin, Owner owner, String name) {
        return OwnerScope.caller().map(owner::subjectFor).flatMap(subject -> scope.write(owner, subject,
                new OwnerScope.Write("plugin_setting.delete", "change a plugin's settings", plugin + "/" + OwnerNames.of(owner, subject) + "/" + name),
                caller -> Mono.empty(), caller -> remove(plugin, owner, subject, name).then()));
    }

    private Mono<Long> remove(String plugin, Owner owner, String subject, String name) {
        return db.sql("DELETE FROM plugin_setting WHERE plugin = :plugin AND owner = :owner AND subject = :subject AND name = :name")
                .bind("plugin", plugin).bind("owner", owner.wire()).bind("subject", subject).bind("name", name)
                .fetch().rowsUpdated();
    }
}
