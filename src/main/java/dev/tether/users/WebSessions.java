package dev.tether.users;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.identity.Principal;
import dev.tether.identity.Role;
import dev.tether.identity.Via;
import dev.tether.store.Columns;

/**
 * The web UI's sessions after a sign-in: the cookie {@value #COOKIE} holds 256 random bits, the {@code web_session} table
 * their SHA-256, so any replica serves any request (no sticky sessions) and a dump of the database opens none. A session
 * lasts {@code tether.identity.oidc.session-ttl}; signing out ends it at once here and within
 * {@code tether.identity.token-recheck} on other replicas.
 */
@Component
final class WebSessions {

    static final String COOKIE = "tether_session";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int KNOWN = 10_000;

    private record Known(Optional<Principal> principal, long expiresAt, long readAt) {
    }

    private final DatabaseClient db;
    private final IdentityProperties properties;
    private final Clock clock = Clock.systemUTC();
    private final Map<String, Known> known = new ConcurrentHashMap<>();

    WebSessions(DatabaseClient db, IdentityProperties properties) {
        this.db = db;
        this.properties = properties;
    }

    /** Opens a session for a principal that just signed in; emits the cookie's value. */
    Mono<String> open(Principal principal) {
        byte[] random = new byte[32];
        RANDOM.nextBytes(random);
        String id = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
        long now = clock.millis();
        DatabaseClient.GenericExecuteSpec insert = db.sql("INSERT INTO web_session (id_hash, subject, role, name, created_at, expires_at) "
                        + "VALUES (:hash, :subject, :role, :name, :now, :expires)")
                .bind("hash", hash(id)).bind("subject", principal.subject()).bind("role", principal.role().wire())
                .bind("now", now).bind("expires", now + properties.oidc().sessionTtl().toMillis());
        insert = principal.name() == null ? insert.bindNull("name", String.class) : insert.bind("name", principal.name());
        return insert.fetch().rowsUpdated()
                // Sessions that ended are pruned as new ones open: at most a day's worth of rows outlive their end.
                .then(db.sql("DELETE FROM web_session WHERE expires_at < :before").bind("before", now - 86_400_000L).fetch().rowsUpdated())
                .thenReturn(id);
    }

    /** The principal of a session cookie; empty for an unknown, ended or expired one. */
    Mono<Optional<Principal>> principal(String cookie) {
        String hash = hash(cookie);
        long now = clock.millis();
        Known cached = known.get(hash);
        if (cached != null && now - cached.readAt() < properties.tokenRecheck().toMillis()) {
            return Mono.just(now < cached.expiresAt() ? cached.principal() : Optional.empty());
        }
        return db.sql("SELECT subject, role, name, expires_at FROM web_session WHERE id_hash = :hash").bind("hash", hash)
                .map(row -> new Known(Optional.of(new Principal(properties.tenant(), Columns.text(row, "subject"),
                        Role.parse(Columns.text(row, "role")).orElse(Role.VIEWER), Via.SESSION, null, row.get("name", String.class))),
                        Columns.number(row, "expires_at"), now))
                .one()
                .defaultIfEmpty(new Known(Optional.empty(), 0, now))
                .doOnNext(read -> {
                    if (known.size() >= KNOWN) {
                        known.clear();
                    }
                    known.put(hash, read);
                })
                .map(read -> now < read.expiresAt() ? read.principal() : Optional.<Principal>empty());
    }

    /** Ends a session (signing out); nothing to end is no failure. */
    Mono<Void> close(String cookie) {
        String hash = hash(cookie);
        known.remove(hash);
        return db.sql("DELETE FROM web_session WHERE id_hash = :hash").bind("hash", hash).fetch().rowsUpdated().then();
    }

    private static String hash(String id) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(id.getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException("every Java has SHA-256", impossible);
        }
    }
}
