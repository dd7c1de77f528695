package dev.tether.store.changes;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import io.r2dbc.spi.Readable;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcProperties;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The {@code store_change} log: one row per write, so that a replica holding the store in memory finds what
 * another one changed by reading a few rows of one table. Rows this replica wrote itself are skipped.
 */
@Component
public final class StoreChanges {

    /** A change another replica made. */
    public record Change(long seq, String kind, String item) {
    }

    private final DatabaseClient db;
    private final String origin = UUID.randomUUID().toString();
    private final AtomicLong latest = new AtomicLong();
    /** The newest change this replica wrote itself (kept on PostgreSQL only, the one store replicas forward on). */
    private final AtomicLong written = new AtomicLong();
    /** Changes read in the look-back window, so that one read twice is not applied twice. */
    private final Map<Long, Boolean> applied = Collections.synchronizedMap(new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
            return size() > 4096;
        }
    });
    private volatile long lastPrune;

    private final boolean shared;
    private final boolean announces;
    private final String recordStatement;

    /** A log for a store other replicas may share. */
    StoreChanges(DatabaseClient db) {
        this(db, true);
    }

    /** The log of the store at {@code spring.r2dbc.url}: none for an embedded H2 that no other process can open. */
    @Autowired
    StoreChanges(DatabaseClient db, R2dbcProperties r2dbc) {
        this(db, sharable(r2dbc.getUrl()));
    }

    private StoreChanges(DatabaseClient db, boolean shared) {
        this.db = db;
        this.shared = shared;
        String insert = "INSERT INTO store_change (kind, item, origin, changed_at) VALUES (:kind, :item, :origin, :at)";
        // On PostgreSQL the row announces itself (ChangeSignals), so that peers read it now rather than at a poll.
        this.announces = ChangeSignals.announces(db);
        this.recordStatement = announces ? "WITH added AS (" + insert + " RETURNING seq) SELECT seq, pg_notify('"
                + ChangeSignals.CHANNEL + "', seq::text) FROM added" : insert;
    }

    /**
     * Whether other processes may write the store: not an embedded H2 file, which the daemon that opened it locks
     * (unless its URL asks for {@code AUTO_SERVER=TRUE}), nor an in-memory H2. There, recording and reading changes
     * would be a write per write and a query a second for nothing.
     */
    static boolean sharable(@Nullable String r2dbcUrl) {
        String url = r2dbcUrl == null ? "" : r2dbcUrl.toLowerCase(java.util.Locale.ROOT);
        return !url.startsWith("r2dbc:h2:") || url.startsWith("r2dbc:h2:tcp:") || url.contains("auto_server=true");
    }

    /** Whether other replicas may write the store, so that its log is worth recording and reading. */
    public boolean shared() {
        return shared;
    }

    /** Records that this replica wrote {@code item} of {@code kind}, for the other replicas to read it again. */
    public Mono<Void> record(String kind, String item) {
        if (!shared) {
            return Mono.empty();
        }
        DatabaseClient.GenericExecuteSpec insert = db.sql(recordStatement)
                .bind("kind", kind).bind("item", item).bind("origin", origin).bind("at", System.currentTimeMillis());
        return announces ? insert.map(row -> number(row, "seq")).one().doOnNext(seq -> written.accumulateAndGet(seq, Math::max))
                .then() : insert.then();
    }

    /** How far into the log this replica has gone: the newest change it has read or written. */
    long position() {
        return Math.max(latest.get(), written.get());
    }

    /** The newest change read so far: once the changes read have been applied, the store is current up to here. */
    long read() {
        return latest.get();
    }

    /**
     * The newest change now, where reading starts after a load of the whole store. The changes of the last
     * {@code lookback} that are visible now count as applied: each was recorded after its write, so the load that
     * follows reads that write, and the look-back of {@link #since} then re-reads only what commits late. Unmarked,
     * they came back at the first look as if new (a policy change read again dropped the policies read since).
     */
    public Mono<Long> loadFrom(long lookback) {
        if (!shared) {
            return Mono.just(0L);
        }
        // One statement, so that the position and the changes counted as applied are one snapshot of the log
        return db.sql("SELECT seq FROM store_change WHERE seq > (SELECT COALESCE(MAX(seq), 0) FROM store_change) - :lookback")
                .bind("lookback", lookback)
                .map(row -> number(row, "seq"))
                .all()
                .doOnNext(seq -> applied.put(seq, Boolean.TRUE))
                .reduce(0L, Math::max);
    }

    /** Marks the log read through {@code position}: the store has loaded what was written up to there. */
    public void seen(long position) {
        latest.accumulateAndGet(position, Math::max);
    }

    /** Changes of other replicas after the last seen, re-reading {@code lookback} before it for late commits. */
    public Flux<Change> since(long lookback) {
        return Flux.defer(() -> db.sql("SELECT seq, kind, item, origin FROM store_change WHERE seq > :after ORDER BY seq")
                .bind("after", Math.max(0, latest.get() - lookback))
                .map(row -> new Object[] { row.get("seq", Long.class), row.get("kind", String.class), row.get("item", String.class),
                        row.get("origin", String.class) })
                .all()
                .filter(row -> applied.put((Long) row[0], Boolean.TRUE) == null)
                .doOnNext(row -> seen((Long) row[0]))
                .filter(row -> !origin.equals(row[3]))
                .map(row -> new Change((Long) row[0], (String) row[1], (String) row[2])));
    }

    /** Drops rows older than {@code kept}, at most once a minute. */
    public Mono<Void> prune(Duration kept) {
        return Mono.defer(() -> {
            long now = System.currentTimeMillis();
            if (now - lastPrune < 60_000) {
                return Mono.empty();
            }
            lastPrune = now;
            return db.sql("DELETE FROM store_change WHERE changed_at < :before").bind("before", now - kept.toMillis())
                    .fetch().rowsUpdated().then();
        });
    }

    /**
     * A count the schema or the query declares never null. Not the store's {@code Columns}: the store uses this package,
     * so this package does not use the store.
     */
    private static long number(Readable row, String column) {
        Long value = row.get(column, Long.class);
        if (value == null) {
            throw new IllegalStateException("column " + column + " is null, but the schema declares it NOT NULL");
        }
        return value;
    }
}
