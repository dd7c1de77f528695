package dev.tether.users;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.r2dbc.spi.Readable;
import io.r2dbc.spi.Statement;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;
import org.springframework.context.SmartLifecycle;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.tether.docker.InstanceId;
import dev.tether.identity.Audit;
import dev.tether.identity.AuditEvent;
import dev.tether.identity.Principal;
import dev.tether.store.Columns;

/**
 * The audit trail: every event is a log line at once (logger {@code tether.audit}, its fields as key-value pairs for
 * structured logging) and a row of {@code audit_event} shortly after, written in batches every
 * {@value #FLUSH_MILLIS} ms so that a busy gateway does not pay an insert per request. Nothing updates or deletes a row
 * but the pruning of rows older than {@code tether.identity.audit-retention}. A read ({@link #query}) first writes what
 * this replica still holds, so it sees every event recorded before it on this replica. At most {@value #MAX_PENDING}
 * events wait; beyond that (the database unreachable for long) events reach the log only, counted by
 * {@code tether.audit.dropped}.
 */
@Component
public final class AuditTrail implements Audit, SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(AuditTrail.class);
    private static final Logger trail = LoggerFactory.getLogger("tether.audit");
    static final long FLUSH_MILLIS = 200;
    static final int MAX_PENDING = 100_000;
    /** Rows per statement: 1,200 parameters, well within what H2 and PostgreSQL take in one statement. */
    private static final int ROWS_PER_INSERT = 100;
    private static final int FIELDS = 12;
    private static final int SHOWN = 1000;
    private static final String COLUMNS = "at, tenant, subject, role, via, credential, action, target, outcome, status, replica, detail";

    /** An event as the trail keeps it. */
    public record Stored(long seq, Instant at, String tenant, String subject, String role, String via, @Nullable String credential,
            String action, String target, String outcome, @Nullable Integer status, String replica, @Nullable String detail) {
    }

    /** What to read: each given field must match; {@code before} pages back from a sequence number. */
    public record Filter(Optional<String> subject, Optional<String> action, Optional<String> outcome, Optional<Instant> since,
            Optional<Long> before, int limit) {
    }

    private final DatabaseClient db;
    private final IdentityProperties properties;
    private final String replica;
    private final Clock clock;
    private final Queue<AuditEvent> pending = new ConcurrentLinkedQueue<>();
    private final AtomicInteger pendingCount = new AtomicInteger();
    private final Counter dropped;
    private final AtomicLong lastDropWarning = new AtomicLong();
    private final Disposable.Composite timers = Disposables.composite();
    /** The newest batch write; the next one starts after it, and a read waits for it. */
    private Mono<Void> lastWrite = Mono.empty();
    private volatile boolean running;

    AuditTrail(DatabaseClient db, IdentityProperties properties, InstanceId instance, MeterRegistry registry) {
        this.db = db;
        this.properties = properties;
        this.replica = instance.value();
        this.clock = Clock.systemUTC();
        this.dropped = Counter.builder("tether.audit.dropped")
                .description("audit events that reached the log but not the audit table: too many were waiting to be written")
                .register(registry);
    }

    @Override
    public void record(AuditEvent event) {
        logLine(event);
        if (pendingCount.incrementAndGet() > MAX_PENDING) {
            pendingCount.decrementAndGet();
            dropped.increment();
            long now = clock.millis();
            long last = lastDropWarning.get();
            if (now - last > 60_000 && lastDropWarning.compareAndSet(last, now)) {
                log.warn("{} audit events wait to be written; newer ones reach the log only until the database takes them",
                        MAX_PENDING);
            }
            return;
        }
        pending.add(event);
    }

    private void logLine(AuditEvent event) {
        Principal who = event.principal();
        String subject = who == null ? "" : who.shown();
        LoggingEventBuilder line = trail.atInfo()
                .addKeyValue("audit.action", event.action())
                .addKeyValue("audit.outcome", event.outcome())
                .addKeyValue("audit.subject", subject)
                .addKeyValue("audit.target", event.target());
        if (event.status() != null) {
            line = line.addKeyValue("audit.status", event.status());
        }
        if (who != null) {
            line = line.addKeyValue("audit.role", who.role().wire()).addKeyValue("audit.via", who.via().wire())
                    .addKeyValue("audit.tenant", who.tenant());
            if (who.credential() != null) {
                line = line.addKeyValue("audit.credential", who.credential());
            }
        }
        line.log("audit action={} outcome={}{} subject={} role={} via={}{} target=\"{}\"{}", event.action(), event.outcome(),
                event.status() == null ? "" : " status=" + event.status(), subject.isEmpty() ? "-" : subject,
                who == null ? "-" : who.role().wire(), who == null ? "-" : who.via().wire(),
                who == null || who.credential() == null ? "" : " credential=" + who.credential(), event.target(),
                event.detail() == null ? "" : " detail=\"" + event.detail() + "\"");
    }

    /** Writes what waits, after the write before it; completes when all of it is in the table. */
    Mono<Void> flush() {
        return Mono.defer(() -> {
            synchronized (this) {
                List<AuditEvent> batch = drain();
                if (batch.isEmpty()) {
                    return lastWrite;
                }
                Mono<Void> write = lastWrite.onErrorResume(failed -> Mono.empty()).then(insert(batch)).cache();
                lastWrite = write;
                // Started here, owned by the trail: a reader that leaves must not leave the batch unwritten.
                write.subscribe(null, failed -> log.error("could not write {} audit events to the audit table; they are in the log: {}",
                        batch.size(), failed.toString()));
                return write;
            }
        });
    }

    private List<AuditEvent> drain() {
        List<AuditEvent> batch = new ArrayList<>();
        AuditEvent next;
        while ((next = pending.poll()) != null) {
            pendingCount.decrementAndGet();
            batch.add(next);
        }
        return batch;
    }

    /**
     * One multi-row {@code INSERT} per {@value #ROWS_PER_INSERT} events. A statement with a binding per event answers each
     * binding apart, and on the embedded store every answer is a hop to its threads ({@code EmbeddedStoreThreads}): a
     * thread hand-off per event. One statement is also one commit, so the batch needs no transaction of its own (which
     * was two more hops), and a batch is never half written.
     */
    private Mono<Void> insert(List<AuditEvent> events) {
        return Flux.fromIterable(events).buffer(ROWS_PER_INSERT).concatMap(rows -> db.inConnection(connection -> {
            Statement statement = connection.createStatement(insertOf(rows.size()));
            for (int row = 0; row < rows.size(); row++) {
                bind(statement, row * FIELDS, rows.get(row));
            }
            return Flux.from(statement.execute()).flatMap(result -> result.getRowsUpdated()).then();
        })).then();
    }

    private static String insertOf(int rows) {
        StringBuilder sql = new StringBuilder("INSERT INTO audit_event (" + COLUMNS + ") VALUES ");
        for (int row = 0; row < rows; row++) {
            sql.append(row == 0 ? "(" : ", (");
            for (int field = 1; field <= FIELDS; field++) {
                sql.append(field == 1 ? "$" : ", $").append(row * FIELDS + field);
            }
            sql.append(')');
        }
        return sql.toString();
    }

    /** Binds {@code event}'s fields from the index {@code first} on, in the order of {@link #COLUMNS}. */
    private void bind(Statement statement, int first, AuditEvent event) {
        Principal who = event.principal();
        statement.bind(first, event.at().toEpochMilli());
        statement.bind(first + 1, who == null ? properties.tenant() : who.tenant());
        statement.bind(first + 2, who == null ? "" : who.subject());
        statement.bind(first + 3, who == null ? "-" : who.role().wire());
        statement.bind(first + 4, who == null ? "-" : who.via().wire());
        bindNullable(statement, first + 5, who == null ? null : cut(who.credential(), 200));
        statement.bind(first + 6, cut(event.action(), 64));
        statement.bind(first + 7, cut(event.target(), 2100));
        statement.bind(first + 8, cut(event.outcome(), 32));
        if (event.status() == null) {
            statement.bindNull(first + 9, Integer.class);
        }
        else {
            statement.bind(first + 9, event.status());
        }
        statement.bind(first + 10, replica);
        bindNullable(statement, first + 11, cut(event.detail(), 1000));
    }

    private static void bindNullable(Statement statement, int index, @Nullable String value) {
        if (value == null) {
            statement.bindNull(index, String.class);
        }
        else {
            statement.bind(index, value);
        }
    }

    private static @Nullable String cut(@Nullable String value, int length) {
        return value == null || value.length() <= length ? value : value.substring(0, length);
    }

    /** Events matching {@code filter}, newest first, after writing what this replica still holds. */
    public Flux<Stored> query(Filter filter) {
        StringBuilder sql = new StringBuilder("SELECT seq, " + COLUMNS + " FROM audit_event WHERE 1 = 1");
        filter.subject().ifPresent(s -> sql.append(" AND subject = :subject"));
        filter.action().ifPresent(a -> sql.append(" AND action = :action"));
        filter.outcome().ifPresent(o -> sql.append(" AND outcome = :outcome"));
        filter.since().ifPresent(s -> sql.append(" AND at >= :since"));
        filter.before().ifPresent(b -> sql.append(" AND seq < :before"));
        sql.append(" ORDER BY seq DESC LIMIT ").append(Math.max(1, Math.min(filter.limit(), SHOWN)));
        return flush().onErrorResume(failed -> Mono.empty()).thenMany(Flux.defer(() -> {
            DatabaseClient.GenericExecuteSpec spec = db.sql(sql.toString());
            if (filter.subject().isPresent()) {
                spec = spec.bind("subject", filter.subject().get());
            }
            if (filter.action().isPresent()) {
                spec = spec.bind("action", filter.action().get());
            }
            if (filter.outcome().isPresent()) {
                spec = spec.bind("outcome", filter.outcome().get());
            }
            if (filter.since().isPresent()) {
                spec = spec.bind("since", filter.since().get().toEpochMilli());
            }
            if (filter.before().isPresent()) {
                spec = spec.bind("before", filter.before().get());
            }
            return spec.map(row -> stored(row)).all();
        }));
    }

    private static Stored stored(Readable row) {
        return new Stored(Columns.number(row, "seq"), Instant.ofEpochMilli(Columns.number(row, "at")), Columns.text(row, "tenant"),
                Columns.text(row, "subject"), Columns.text(row, "role"), Columns.text(row, "via"),
                row.get("credential", String.class), Columns.text(row, "action"), Columns.text(row, "target"),
                Columns.text(row, "outcome"), row.get("status", Integer.class), Columns.text(row, "replica"),
                row.get("detail", String.class));
    }

    private Mono<Void> prune() {
        Duration retention = properties.auditRetention();
        if (retention.isZero()) {
            return Mono.empty();
        }
        return db.sql("DELETE FROM audit_event WHERE at < :before").bind("before", clock.millis() - retention.toMillis())
                .fetch().rowsUpdated()
                .doOnNext(rows -> {
                    if (rows > 0) {
                        log.info("pruned {} audit events older than {} (tether.identity.audit-retention)", rows, retention);
                    }
                })
                .then();
    }

    @Override
    public void start() {
        running = true;
        timers.add(Flux.interval(Duration.ofMillis(FLUSH_MILLIS), Schedulers.parallel())
                .onBackpressureDrop()
                .concatMap(tick -> flush().onErrorResume(failed -> Mono.empty()), 1)
                .subscribe(null, failed -> log.error("the audit trail's writer stopped", failed)));
        timers.add(Flux.interval(Duration.ofMinutes(1), Duration.ofHours(1), Schedulers.parallel())
                .onBackpressureDrop()
                .concatMap(tick -> prune().onErrorResume(failed -> {
                    log.warn("could not prune the audit trail: {}", failed.toString());
                    return Mono.empty();
                }), 1)
                .subscribe(null, failed -> log.error("the audit trail's pruning stopped", failed)));
    }

    /** Writes what waits, bounded, before the database closes; the events are in the log whatever happens. */
    @Override
    public void stop(Runnable callback) {
        running = false;
        timers.dispose();
        flush().timeout(Duration.ofSeconds(10))
                .doFinally(signal -> callback.run())
                .subscribe(null, failed -> log.error("could not write the last audit events at shutdown; they are in the log: {}",
                        failed.toString()));
    }

    @Override
    public void stop() {
        stop(() -> { });
    }

    /** Stops with the store's upkeep (phase 5): after the requests that record events, before the database closes. */
    @Override
    public int getPhase() {
        return 5;
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
