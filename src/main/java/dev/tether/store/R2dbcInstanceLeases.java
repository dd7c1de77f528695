package dev.tether.store;

import java.time.Instant;

import io.r2dbc.spi.Readable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** {@link InstanceLeases} in the {@code instance_lease} table. */
@Component
final class R2dbcInstanceLeases implements InstanceLeases {

    private final DatabaseClient db;

    R2dbcInstanceLeases(DatabaseClient db) {
        this.db = db;
    }

    @Override
    public Mono<String> storeIdentity() {
        return db.sql("SELECT id FROM store_identity").map(row -> row.get("id", String.class)).first();
    }

    @Override
    public Mono<Boolean> renew(Lease lease) {
        // Only this replica writes its own row's lease, so update-then-insert cannot race another writer of it. A row a
        // peer claimed (this replica was taken for dead) is written anew: the claimer's final delete then finds no
        // claim of its own and leaves the new row alone.
        return db.sql("UPDATE instance_lease SET address = :address, expires_at = :expires WHERE instance_id = :id "
                        + "AND claimed_by IS NULL")
                .bind("address", lease.address())
                .bind("expires", lease.expiresAt().toEpochMilli())
                .bind("id", lease.instance())
                .fetch().rowsUpdated()
                .flatMap(rows -> rows > 0 ? Mono.just(true)
                        : release(lease.instance()).then(db.sql("INSERT INTO instance_lease (instance_id, address, started_at, expires_at, "
                                        + "draining) VALUES (:id, :address, :started, :expires, :draining)")
                                .bind("id", lease.instance())
                                .bind("address", lease.address())
                                .bind("started", lease.startedAt().toEpochMilli())
                                .bind("expires", lease.expiresAt().toEpochMilli())
                                .bind("draining", lease.draining())
                                .fetch().rowsUpdated())
                                .thenReturn(false));
    }

    @Override
    public Mono<Void> drain(String instance) {
        return db.sql("UPDATE instance_lease SET draining = TRUE WHERE instance_id = :id").bind("id", instance).fetch().rowsUpdated()
                .then();
    }

    @Override
    public Mono<Void> release(String instance) {
        return db.sql("DELETE FROM instance_lease WHERE instance_id = :id").bind("id", instance).fetch().rowsUpdated().then();
    }

    @Override
    public Flux<Lease> standing() {
        return db.sql("SELECT instance_id, address, started_at, expires_at, draining, claimed_by FROM instance_lease "
                        + "WHERE claimed_by IS NULL AND tombstone_until IS NULL")
                .map(R2dbcInstanceLeases::lease)
                .all();
    }

    @Override
    public Flux<Lease> expired(Instant now) {
        return db.sql("SELECT instance_id, address, started_at, expires_at, draining, claimed_by FROM instance_lease "
                        + "WHERE expires_at < :now AND tombstone_until IS NULL ORDER BY expires_at")
                .bind("now", now.toEpochMilli())
                .map(R2dbcInstanceLeases::lease)
                .all();
    }

    @Override
    public Mono<Boolean> claim(Lease lease, String claimer, Instant now, Instant until) {
        // The row lock of the update decides: of two replicas claiming at once, one marks the row, and the other's
        // condition, evaluated again on the row the first wrote, no longer holds.
        return db.sql("UPDATE instance_lease SET claimed_by = :claimer, claimed_until = :until WHERE instance_id = :id "
                        + "AND expires_at < :now AND tombstone_until IS NULL "
                        + "AND (claimed_by IS NULL OR claimed_by = :claimer OR claimed_until < :now)")
                .bind("claimer", claimer)
                .bind("until", until.toEpochMilli())
                .bind("id", lease.instance())
                .bind("now", now.toEpochMilli())
                .fetch().rowsUpdated()
                .map(rows -> rows > 0);
    }

    @Override
    public Mono<Void> unclaim(String instance, String claimer) {
        // The claim runs out at once, so that any peer may take it; the replica stays taken for dead (claimed_by).
        return db.sql("UPDATE instance_lease SET claimed_until = 0 WHERE instance_id = :id AND claimed_by = :claimer")
                .bind("id", instance)
                .bind("claimer", claimer)
                .fetch().rowsUpdated()
                .then();
    }

    @Override
    public Mono<Boolean> reaped(String instance, String claimer, Instant until) {
        return db.sql("UPDATE instance_lease SET tombstone_until = :until WHERE instance_id = :id AND claimed_by = :claimer "
                        + "AND tombstone_until IS NULL")
                .bind("until", until.toEpochMilli())
                .bind("id", instance)
                .bind("claimer", claimer)
                .fetch().rowsUpdated()
                .map(rows -> rows > 0);
    }

    @Override
    public Flux<Tombstone> tombstones() {
        return db.sql("SELECT instance_id, tombstone_until FROM instance_lease WHERE tombstone_until IS NOT NULL")
                .map(row -> new Tombstone(row.get("instance_id", String.class),
                        Instant.ofEpochMilli(row.get("tombstone_until", Long.class))))
                .all();
    }

    @Override
    public Mono<Void> bury(String instance, Instant now) {
        return db.sql("DELETE FROM instance_lease WHERE instance_id = :id AND tombstone_until < :now")
                .bind("id", instance)
                .bind("now", now.toEpochMilli())
                .fetch().rowsUpdated()
                .then();
    }

    @Override
    public Mono<Boolean> takenForDead(String instance) {
        return db.sql("SELECT instance_id FROM instance_lease WHERE instance_id = :id AND claimed_by IS NOT NULL")
                .bind("id", instance)
                .map(row -> true)
                .first()
                .defaultIfEmpty(false);
    }

    private static Lease lease(Readable row) {
        return new Lease(row.get("instance_id", String.class), row.get("address", String.class),
                Instant.ofEpochMilli(row.get("started_at", Long.class)), Instant.ofEpochMilli(row.get("expires_at", Long.class)),
                Boolean.TRUE.equals(row.get("draining", Boolean.class)), row.get("claimed_by", String.class) != null);
    }
}
