package dev.tether.store.storage;

import io.r2dbc.spi.Readable;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.r2dbc.core.DatabaseClient.GenericExecuteSpec;
import org.springframework.stereotype.Component;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.identity.Principal;
import dev.tether.store.Columns;
import dev.tether.store.ExecutionJournals;
import dev.tether.store.secrets.SecretBox;
import dev.tether.store.secrets.SecretSlot;

/** {@link ExecutionJournals} in {@code execution_journal} and {@code execution_journal_segment}, every text sealed. */
@Component
final class R2dbcExecutionJournals implements ExecutionJournals {

    private static final String PAUSED = "paused";
    private static final String RUNNING = "running";

    private final DatabaseClient db;
    private final TransactionalOperator transaction;
    private final SecretBox secrets;

    R2dbcExecutionJournals(DatabaseClient db, ReactiveTransactionManager transactions, SecretBox secrets) {
        this.db = db;
        this.transaction = TransactionalOperator.create(transactions);
        this.secrets = secrets;
    }

    @Override
    public Mono<Void> create(PauseWrite pause, String code, @Nullable String origin, Principal owner) {
        GenericExecuteSpec row = db.sql("INSERT INTO execution_journal (journal_id, pause_id, state, holder, version, code, pause, origin, "
                        + "segments, bytes, expires_at, subject) VALUES (:journal, :pauseId, :state, :holder, 1, :code, :pause, :origin, 1, "
                        + ":bytes, :expires, :subject)")
                .bind("journal", pause.journalId())
                .bind("subject", owner.subject())
                .bind("pauseId", pause.pauseId())
                .bind("state", PAUSED)
                .bind("holder", pause.holder())
                .bind("code", seal(code, pause.journalId(), "code"))
                .bind("pause", seal(pause.pause(), pause.journalId(), "pause"))
                .bind("bytes", pause.bytes())
                .bind("expires", pause.expiresAt());
        row = origin == null ? row.bindNull("origin", String.class) : row.bind("origin", origin);
        return row.fetch().rowsUpdated().then(segment(pause)).as(transaction::transactional).then();
    }

    @Override
    public Mono<Boolean> repause(PauseWrite pause, long version) {
        Mono<Long> row = db.sql("UPDATE execution_journal SET pause_id = :pauseId, state = :state, holder = :holder, version = version + 1, "
                        + "pause = :pause, segments = :segments, bytes = :bytes, expires_at = :expires WHERE journal_id = :journal AND version = :version")
                .bind("pauseId", pause.pauseId())
                .bind("state", PAUSED)
                .bind("holder", pause.holder())
                .bind("pause", seal(pause.pause(), pause.journalId(), "pause"))
                .bind("segments", pause.seq() + 1)
                .bind("bytes", pause.bytes())
                .bind("expires", pause.expiresAt())
                .bind("journal", pause.journalId())
                .bind("version", version)
                .fetch().rowsUpdated();
        // The segment only when the row was ours: a lost compare-and-set writes nothing at all.
        return row.flatMap(updated -> updated == 1 ? segment(pause).thenReturn(true) : Mono.just(false))
                .as(transaction::transactional);
    }

    private Mono<Long> segment(PauseWrite pause) {
        return db.sql("INSERT INTO execution_journal_segment (journal_id, seq, entries) VALUES (:journal, :seq, :entries)")
                .bind("journal", pause.journalId())
                .bind("seq", pause.seq())
                .bind("entries", seal(pause.segment(), pause.journalId(), "segment." + pause.seq()))
                .fetch().rowsUpdated();
    }

    @Override
    public Mono<StoredJournal> find(String pauseId, Principal caller) {
        // The daemon's own work finds any; a user its own alone, whatever its role (its code and approvals are its own).
        GenericExecuteSpec query = db.sql("SELECT journal_id, pause_id, state, holder, version, code, pause, origin, segments, bytes, expires_at "
                        + "FROM execution_journal WHERE pause_id = :pauseId" + (caller.daemon() ? "" : " AND subject = :subject"))
                .bind("pauseId", pauseId);
        return (caller.daemon() ? query : query.bind("subject", caller.subject()))
                .map(this::row)
                .one();
    }

    @Override
    public Flux<String> segments(String journalId) {
        return db.sql("SELECT seq, entries FROM execution_journal_segment WHERE journal_id = :journal ORDER BY seq")
                .bind("journal", journalId)
                .map(segment -> secrets.open(Columns.text(segment, "entries"),
                        SecretSlot.journal(journalId, "segment." + segment.get("seq", Integer.class))))
                .all();
    }

    private StoredJournal row(Readable row) {
        String journal = Columns.text(row, "journal_id");
        return new StoredJournal(journal, row.get("pause_id", String.class), PAUSED.equals(row.get("state", String.class)),
                Columns.text(row, "holder"), Columns.number(row, "version"),
                secrets.open(Columns.text(row, "code"), SecretSlot.journal(journal, "code")),
                secrets.open(row.get("pause", String.class), SecretSlot.journal(journal, "pause")),
                row.get("origin", String.class), Columns.number(row, "bytes"), Columns.number(row, "expires_at"));
    }

    @Override
    public Mono<Boolean> claim(String journalId, long version, String holder, long expiresAt) {
        return db.sql("UPDATE execution_journal SET state = :state, pause_id = NULL, holder = :holder, version = version + 1, "
                        + "expires_at = :expires WHERE journal_id = :journal AND version = :version AND state = :paused")
                .bind("state", RUNNING)
                .bind("holder", holder)
                .bind("expires", expiresAt)
                .bind("journal", journalId)
                .bind("version", version)
                .bind("paused", PAUSED)
                .fetch().rowsUpdated()
                .map(updated -> updated == 1);
    }

    @Override
    public Mono<Boolean> remove(String journalId, long version) {
        return db.sql("DELETE FROM execution_journal WHERE journal_id = :journal AND version = :version")
                .bind("journal", journalId)
                .bind("version", version)
                .fetch().rowsUpdated()
                .map(removed -> removed == 1);
    }

    @Override
    public Mono<Long> removeExpired(long now) {
        return db.sql("DELETE FROM execution_journal WHERE expires_at < :now")
                .bind("now", now)
                .fetch().rowsUpdated();
    }

    private String seal(String plain, String journalId, String field) {
        return secrets.seal(plain, SecretSlot.journal(journalId, field));
    }
}
