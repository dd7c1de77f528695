package dev.tether.store.storage;

import java.time.Instant;

import io.r2dbc.spi.Readable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.store.Columns;
import dev.tether.store.Owner;
import dev.tether.store.Policy;
import dev.tether.store.PolicyAction;
import dev.tether.store.PolicyStore;

/** Policies in the {@code policy} table, in Executor's list order, unscoped; {@link CachedPolicies} fronts it and scopes them. */
@Component
final class R2dbcPolicies implements PolicyStore {

    private final DatabaseClient db;

    R2dbcPolicies(DatabaseClient db) {
        this.db = db;
    }

    private static final String POLICY_COLUMNS = "id, owner, subject, pattern, action, position, created_at, updated_at";

    @Override
    public Flux<Policy> policies() {
        // 'user' sorts after 'org', so DESC puts user policies first as Executor lists them.
        return db.sql("SELECT " + POLICY_COLUMNS + " FROM policy ORDER BY owner DESC, position, id")
                .map(R2dbcPolicies::policy)
                .all();
    }

    @Override
    public Mono<Policy> create(Policy policy) {
        return db.sql("INSERT INTO policy (" + POLICY_COLUMNS + ") VALUES (:id, :owner, :subject, :pattern, :action, :position, :created, "
                        + ":updated)")
                .bind("id", policy.id())
                .bind("owner", policy.owner().wire())
                .bind("subject", policy.subject())
                .bind("pattern", policy.pattern())
                .bind("action", policy.action().wire())
                .bind("position", policy.position())
                .bind("created", policy.createdAt().toEpochMilli())
                .bind("updated", policy.updatedAt().toEpochMilli())
                .fetch().rowsUpdated()
                .thenReturn(policy);
    }

    @Override
    public Mono<Policy> find(Owner owner, String subject, String id) {
        return db.sql("SELECT " + POLICY_COLUMNS + " FROM policy WHERE id = :id AND owner = :owner AND subject = :subject")
                .bind("id", id)
                .bind("owner", owner.wire())
                .bind("subject", subject)
                .map(R2dbcPolicies::policy)
                .one();
    }

    @Override
    public Mono<Policy> update(Policy policy) {
        return db.sql("UPDATE policy SET pattern = :pattern, action = :action, position = :position, updated_at = :updated "
                        + "WHERE id = :id AND owner = :owner AND subject = :subject")
                .bind("pattern", policy.pattern())
                .bind("action", policy.action().wire())
                .bind("position", policy.position())
                .bind("updated", policy.updatedAt().toEpochMilli())
                .bind("id", policy.id())
                .bind("owner", policy.owner().wire())
                .bind("subject", policy.subject())
                .fetch().rowsUpdated()
                .flatMap(rows -> rows == 0 ? Mono.empty() : Mono.just(policy));
    }

    @Override
    public Mono<Boolean> delete(Owner owner, String subject, String id) {
        return db.sql("DELETE FROM policy WHERE id = :id AND owner = :owner AND subject = :subject")
                .bind("id", id)
                .bind("owner", owner.wire())
                .bind("subject", subject)
                .fetch().rowsUpdated().map(rows -> rows > 0);
    }

    private static Policy policy(Readable row) {
        return new Policy(Columns.text(row, "id"), Owner.parse(Columns.text(row, "owner")).orElseThrow(),
                Columns.text(row, "subject"), Columns.text(row, "pattern"), PolicyAction.parse(Columns.text(row, "action")).orElseThrow(),
                Columns.text(row, "position"), Instant.ofEpochMilli(Columns.number(row, "created_at")),
                Instant.ofEpochMilli(Columns.number(row, "updated_at")));
    }
}
