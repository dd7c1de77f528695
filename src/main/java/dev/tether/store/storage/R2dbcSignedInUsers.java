package dev.tether.store.storage;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import io.r2dbc.spi.Readable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.r2dbc.core.DatabaseClient.GenericExecuteSpec;
import org.springframework.stereotype.Component;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.identity.Role;
import dev.tether.store.Columns;
import dev.tether.store.SignedInUsers;
import dev.tether.store.secrets.SecretBox;
import dev.tether.store.secrets.SecretSlot;

/** {@link SignedInUsers} in the {@code identity_user} table, each refresh token sealed to its row. */
@Component
final class R2dbcSignedInUsers implements SignedInUsers {

    private static final String COLUMNS = "subject, name, email, role, refresh_token, signed_in_at, checked_at, disabled_at, disabled_reason";

    private final DatabaseClient db;
    private final TransactionalOperator transaction;
    private final SecretBox secrets;

    R2dbcSignedInUsers(DatabaseClient db, ReactiveTransactionManager transactions, SecretBox secrets) {
        this.db = db;
        this.transaction = TransactionalOperator.create(transactions);
        this.secrets = secrets;
    }

    @Override
    public Mono<Void> signedIn(String subject, Optional<String> name, Optional<String> email, Role role, Optional<String> refreshToken) {
        long now = System.currentTimeMillis();
        GenericExecuteSpec insert = db.sql("INSERT INTO identity_user (" + COLUMNS + ") VALUES (:subject, :name, :email, :role, "
                        + ":refresh, :now, :now, NULL, NULL)")
                .bind("subject", subject).bind("role", role.wire()).bind("now", now);
        insert = SqlBinds.nullable(insert, "name", name.map(n -> cut(n, 255)), String.class);
        insert = SqlBinds.nullable(insert, "email", email.map(e -> cut(e, 320)), String.class);
        insert = SqlBinds.nullable(insert, "refresh", refreshToken.map(token -> secrets.seal(token, SecretSlot.refreshToken(subject))),
                String.class);
        return db.sql("DELETE FROM identity_user WHERE subject = :subject").bind("subject", subject).fetch().rowsUpdated()
                .then(insert.fetch().rowsUpdated())
                .as(transaction::transactional)
                .then();
    }

    @Override
    public Mono<User> find(String subject) {
        return db.sql("SELECT " + COLUMNS + " FROM identity_user WHERE subject = :subject").bind("subject", subject)
                .map(row -> user(row)).one();
    }

    @Override
    public Flux<User> all() {
        return db.sql("SELECT " + COLUMNS + " FROM identity_user ORDER BY subject").map(row -> user(row)).all();
    }

    @Override
    public Flux<Due> due(Duration interval, int limit) {
        long now = System.currentTimeMillis();
        return db.sql("SELECT subject, refresh_token, checked_at FROM identity_user WHERE disabled_at IS NULL "
                        + "AND refresh_token IS NOT NULL AND checked_at < :before ORDER BY checked_at LIMIT " + limit)
                .bind("before", now - interval.toMillis())
                .map(row -> new Object[] { row.get("subject", String.class), Columns.text(row, "refresh_token"),
                        row.get("checked_at", Long.class) })
                .all()
                // Claimed by the replica whose update finds the check time it read: any other read a later one.
                .concatMap(row -> db.sql("UPDATE identity_user SET checked_at = :now WHERE subject = :subject AND checked_at = :seen")
                        .bind("now", now).bind("subject", row[0]).bind("seen", row[2])
                        .fetch().rowsUpdated()
                        .filter(rows -> rows == 1)
                        .map(claimed -> new Due((String) row[0], secrets.open((String) row[1], SecretSlot.refreshToken((String) row[0])))));
    }

    @Override
    public Mono<Void> stillAllowed(String subject, Role role, Optional<String> refreshToken) {
        GenericExecuteSpec update = refreshToken.isPresent()
                ? db.sql("UPDATE identity_user SET role = :role, refresh_token = :refresh, checked_at = :now WHERE subject = :subject")
                        .bind("refresh", secrets.seal(refreshToken.get(), SecretSlot.refreshToken(subject)))
                : db.sql("UPDATE identity_user SET role = :role, checked_at = :now WHERE subject = :subject");
        return update.bind("role", role.wire()).bind("now", System.currentTimeMillis()).bind("subject", subject)
                .fetch().rowsUpdated().then();
    }

    @Override
    public Mono<Void> disabled(String subject, String reason) {
        // The refresh token is forgotten: it no longer lets anyone in, and nothing will ask with it again.
        return db.sql("UPDATE identity_user SET disabled_at = :now, disabled_reason = :reason, refresh_token = NULL "
                        + "WHERE subject = :subject AND disabled_at IS NULL")
                .bind("now", System.currentTimeMillis()).bind("reason", cut(reason, 1000)).bind("subject", subject)
                .fetch().rowsUpdated().then();
    }

    private static User user(Readable row) {
        Long disabled = row.get("disabled_at", Long.class);
        return new User(Columns.text(row, "subject"), Optional.ofNullable(row.get("name", String.class)),
                Optional.ofNullable(row.get("email", String.class)), Role.parse(Columns.text(row, "role")).orElse(Role.VIEWER),
                Instant.ofEpochMilli(Columns.number(row, "signed_in_at")), Instant.ofEpochMilli(Columns.number(row, "checked_at")),
                Optional.ofNullable(disabled).map(Instant::ofEpochMilli), Optional.ofNullable(row.get("disabled_reason", String.class)),
                row.get("refresh_token", String.class) != null);
    }

    private static String cut(String value, int length) {
        return value.length() <= length ? value : value.substring(0, length);
    }
}
