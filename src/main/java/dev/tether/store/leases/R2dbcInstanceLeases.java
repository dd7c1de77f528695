package dev.tether.store.leases;

import java.time.Duration;
import java.time.Instant;

import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Readable;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.store.Columns;

/**
 * {@link InstanceLeases} in the {@code instance_lease} table. This replica's own lease is written (renewed, marked
 * draining, given back) on a database connection of its own, outside the pool every other statement shares: a
 * renewal must not wait in line behind a storm's reads and writes, or a live replica would look dead to its peers. The
 * connection is opened at the first renewal and opened again after one fails.
 */
@Component
final class R2dbcInstanceLeases implements InstanceLeases, DisposableBean {

    private final DatabaseClient db;
    private final @Nullable OwnConnection own;

    /** Every statement on {@code db}: for tests of the statements alone. */
    R2dbcInstanceLeases(DatabaseClient db) {
        this.db = db;
        this.own = null;
    }

    @Autowired
    R2dbcInstanceLeases(DatabaseClient db, ConnectionFactory pool) {
        this.db = db;
        this.own = new OwnConnection(pool);
    }

    @Override
    public Mono<String> storeIdentity() {
        return db.sql("SELECT id FROM store_identity").map(row -> Columns.text(row, "id")).first();
    }

    @Override
    public Mono<Boolean> extend(Lease lease) {
        // Only this replica writes its own row's lease, so update-then-insert cannot race another writer of it.
        return own("UPDATE instance_lease SET address = $1, expires_at = $2 WHERE instance_id = $3 AND claimed_by IS NULL",
                lease.address(), lease.expiresAt().toEpochMilli(), lease.instance())
                .map(rows -> rows > 0);
    }

    @Override
    public Mono<Void> writeAnew(Lease lease) {
        // A row a peer claimed (this replica was taken for dead) goes, tombstone and all: the claimer's final update then
        // finds no claim of its own and leaves the new row alone.
        return release(lease.instance())
                .then(own("INSERT INTO instance_lease (instance_id, address, started_at, expires_at, draining) "
                                + "VALUES ($1, $2, $3, $4, $5)", lease.instance(), lease.address(), lease.startedAt().toEpochMilli(),
                        lease.expiresAt().toEpochMilli(), lease.draining()))
                .then();
    }

    @Override
    public Mono<Void> drain(String instance) {
        return own("UPDATE instance_lease SET draining = TRUE WHERE instance_id = $1", instance).then();
    }

    @Override
    public Mono<Void> release(String instance) {
        return own("DELETE FROM instance_lease WHERE instance_id = $1", instance).then();
    }

    /** A write of this replica's own lease: on its own connection, or on {@code db} for tests of the statements alone. */
    private Mono<Long> own(String sql, Object... binds) {
        if (own != null) {
            return own.update(sql, binds);
        }
        DatabaseClient.GenericExecuteSpec statement = db.sql(sql);
        for (int i = 0; i < binds.length; i++) {
            statement = statement.bind(i, binds[i]);
        }
        return statement.fetch().rowsUpdated();
    }

    @Override
    public void destroy() {
        if (own != null) {
            own.close().block(Duration.ofSeconds(5));
        }
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
                .map(row -> new Tombstone(Columns.text(row, "instance_id"),
                        Instant.ofEpochMilli(Columns.number(row, "tombstone_until"))))
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
        return new Lease(Columns.text(row, "instance_id"), Columns.text(row, "address"),
                Instant.ofEpochMilli(Columns.number(row, "started_at")), Instant.ofEpochMilli(Columns.number(row, "expires_at")),
                Boolean.TRUE.equals(row.get("draining", Boolean.class)), row.get("claimed_by", String.class) != null);
    }
}
