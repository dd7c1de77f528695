package dev.tether.users;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import io.r2dbc.spi.Readable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.identity.Audit;
import dev.tether.identity.AuditEvent;
import dev.tether.identity.NotPermittedException;
import dev.tether.identity.Principal;
import dev.tether.identity.Role;
import dev.tether.identity.Via;
import dev.tether.store.Columns;

/**
 * Personal API tokens: issued to a user (by that user, or by an admin), at most that user's role, expiring, revocable.
 * A token is {@code tth_<id>_<secret>}; the table keeps its SHA-256, so a dump of the database lets no one in. A
 * replica trusts what it last read of a token for {@code tether.identity.token-recheck} and then reads it again: a
 * revocation takes effect at once on the replica that made it and within that bound on the others.
 */
@Component
public final class ApiTokens {

    private static final Logger log = LoggerFactory.getLogger(ApiTokens.class);

    static final String PREFIX = "tth_";
    private static final int ID_LENGTH = 16;
    private static final char[] ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String COLUMNS = "id, subject, name, role, secret_hash, created_by, created_at, expires_at, revoked_at, last_used_at";
    /** Tokens known (or known not to exist) at once; beyond this, stale entries are dropped. */
    private static final int CACHED = 10_000;
    private static final Duration LAST_USED_GRAIN = Duration.ofMinutes(1);

    /** A token and the secret text its holder presents, which is shown once, when it is issued. */
    public record Issued(ApiToken token, String secret) {

        @Override
        public String toString() {
            return "Issued[" + token + ", secret ***]";
        }
    }

    /** What the issuer asks for; absent fields take their defaults (its own subject and role, the default lifetime). */
    public record NewToken(String name, Optional<String> subject, Optional<Role> role, Optional<Instant> expiresAt) {
    }

    private record Row(ApiToken token, String hash) {
    }

    private record Known(Optional<Row> row, long readAt) {
    }

    private final DatabaseClient db;
    private final IdentityProperties properties;
    private final OidcPrincipals oidc;
    private final Audit audit;
    private final Clock clock;
    private final Map<String, Known> known = new ConcurrentHashMap<>();

    @Autowired
    ApiTokens(DatabaseClient db, IdentityProperties properties, OidcPrincipals oidc, Audit audit) {
        this(db, properties, oidc, audit, Clock.systemUTC());
    }

    ApiTokens(DatabaseClient db, IdentityProperties properties, OidcPrincipals oidc, Audit audit, Clock clock) {
        this.db = db;
        this.properties = properties;
        this.oidc = oidc;
        this.audit = audit;
        this.clock = clock;
    }

    /** Whether {@code presented} has the shape of one of these tokens (its secret is not checked). */
    static boolean looksLike(String presented) {
        return presented.startsWith(PREFIX) && presented.length() > PREFIX.length() + ID_LENGTH + 1
                && presented.charAt(PREFIX.length() + ID_LENGTH) == '_';
    }

    /**
     * The principal {@code presented} authenticates as; empty for a token that is malformed, unknown, revoked or expired,
     * or whose secret is wrong (compared in constant time).
     */
    Mono<Optional<Principal>> verify(String presented) {
        if (!looksLike(presented)) {
            return Mono.just(Optional.empty());
        }
        String id = "tok_" + presented.substring(PREFIX.length(), PREFIX.length() + ID_LENGTH);
        byte[] hash = hash(presented).getBytes(StandardCharsets.US_ASCII);
        return row(id).flatMap(row -> Mono.justOrEmpty(row
                        .filter(found -> MessageDigest.isEqual(hash, found.hash().getBytes(StandardCharsets.US_ASCII)))
                        .filter(found -> found.token().active(clock.instant()))))
                .flatMap(found -> noteUse(found.token()).thenReturn(found.token()))
                .map(token -> Optional.of(new Principal(properties.tenant(), token.subject(), token.role(), Via.API_TOKEN, token.id(),
                        token.name())))
                .defaultIfEmpty(Optional.empty());
    }

    /** The token's row as last read, read again once older than the recheck bound. */
    private Mono<Optional<Row>> row(String id) {
        long now = clock.millis();
        Known cached = known.get(id);
        if (cached != null && now - cached.readAt() < properties.tokenRecheck().toMillis()) {
            return Mono.just(cached.row());
        }
        return db.sql("SELECT " + COLUMNS + " FROM api_token WHERE id = :id").bind("id", id)
                .map(row -> row(row)).one()
                .map(Optional::of)
                .defaultIfEmpty(Optional.empty())
                .doOnNext(read -> remember(id, new Known(read, now)));
    }

    private void remember(String id, Known entry) {
        if (known.size() >= CACHED) {
            long stale = clock.millis() - properties.tokenRecheck().toMillis();
            known.values().removeIf(k -> k.readAt() < stale);
        }
        if (known.size() < CACHED) {
            known.put(id, entry);
        }
    }

    /** Records a use, at most once a minute a token: the list shows when each was last used. A failure to record lets the use pass. */
    private Mono<Void> noteUse(ApiToken token) {
        Instant now = clock.instant();
        if (token.lastUsedAt().map(last -> last.plus(LAST_USED_GRAIN).isAfter(now)).orElse(false)) {
            return Mono.empty();
        }
        known.computeIfPresent(token.id(), (id, entry) -> entry.row().map(row -> new Known(Optional.of(new Row(new ApiToken(
                row.token().id(), row.token().subject(), row.token().name(), row.token().role(), row.token().createdBy(),
                row.token().createdAt(), row.token().expiresAt(), row.token().revokedAt(), Optional.of(now)), row.hash())),
                entry.readAt())).orElse(entry));
        return db.sql("UPDATE api_token SET last_used_at = :now WHERE id = :id").bind("now", now.toEpochMilli()).bind("id", token.id())
                .fetch().rowsUpdated()
                .then()
                .onErrorResume(failed -> {
                    log.warn("could not record the use of API token {}: {}", token.id(), failed.toString());
                    return Mono.empty();
                });
    }

    /**
     * Issues a token. Its subject is the caller's own unless an admin names another; its role at most the caller's; its
     * expiry at most {@code tether.identity.token-max-lifetime} away and, for a caller that is itself a token, no later
     * than that token's.
     */
    public Mono<Issued> issue(Principal caller, NewToken request) {
        return Mono.defer(() -> {
            if (caller.daemon()) {
                return Mono.error(new NotPermittedException(caller, "hold an API token"));
            }
            String subject = request.subject().filter(s -> !s.isBlank()).map(String::strip).orElse(caller.subject());
            if (!subject.equals(caller.subject()) && caller.role() != Role.ADMIN) {
                return Mono.error(new NotPermittedException(caller, "issue an API token for another user"));
            }
            Role role = request.role().orElse(caller.role());
            if (!caller.role().atLeast(role)) {
                return Mono.error(new NotPermittedException(caller, "issue a " + role.wire() + " token"));
            }
            Instant now = clock.instant();
            Optional<Instant> asked = request.expiresAt();
            if (asked.isPresent() && !asked.get().isAfter(now)) {
                return Mono.error(new InvalidRequestException("`expiresAt` must be in the future, was " + asked.get()));
            }
            if (asked.isPresent() && asked.get().isAfter(now.plus(properties.tokenMaxLifetime()))) {
                return Mono.error(new InvalidRequestException("`expiresAt` may be at most " + properties.tokenMaxLifetime().toDays()
                        + " days away (tether.identity.token-max-lifetime), was " + asked.get()));
            }
            Mono<Instant> ceiling = caller.via() == Via.API_TOKEN && caller.credential() != null
                    ? row(caller.credential()).map(own -> own.map(r -> r.token().expiresAt()).orElse(now))
                    : Mono.just(Instant.MAX);
            return holder(subject, role).then(ceiling).flatMap(limit -> {
                // Unasked, the default lifetime, but never past the token that asks.
                Instant expiresAt = asked.orElseGet(() -> min(now.plus(properties.tokenLifetime()), limit));
                if (expiresAt.isAfter(limit)) {
                    return Mono.error(new InvalidRequestException("a token issues tokens that expire no later than itself ("
                            + limit + "), `expiresAt` was " + expiresAt));
                }
                String idPart = randomId();
                String secret = PREFIX + idPart + "_" + randomSecret();
                ApiToken token = new ApiToken("tok_" + idPart, subject, request.name(), role, caller.subject(), now, expiresAt,
                        Optional.empty(), Optional.empty());
                return db.sql("INSERT INTO api_token (" + COLUMNS + ") VALUES (:id, :subject, :name, :role, :hash, :createdBy, "
                                + ":createdAt, :expiresAt, NULL, NULL)")
                        .bind("id", token.id()).bind("subject", subject).bind("name", token.name()).bind("role", role.wire())
                        .bind("hash", hash(secret)).bind("createdBy", caller.subject())
                        .bind("createdAt", now.toEpochMilli()).bind("expiresAt", expiresAt.toEpochMilli())
                        .fetch().rowsUpdated()
                        .doOnSuccess(rows -> audit.record(AuditEvent.of(caller, "token.create", token.id() + " for " + subject, "ok")))
                        .thenReturn(new Issued(token, secret));
            });
        });
    }

    /**
     * In {@code oidc} mode, a token is for a user the provider is asked about ({@link UserRevalidation}): one who signed in
     * through the web UI, so that Tether holds their refresh token, is not disabled, and whose role allows the token's.
     * Otherwise a disabled user's token would live on until it expired.
     */
    private Mono<Void> holder(String subject, Role role) {
        if (properties.mode() != IdentityProperties.Mode.OIDC) {
            return Mono.empty();
        }
        return oidc.user(subject).flatMap(known -> {
            if (known.isEmpty() || !known.get().revalidated()) {
                return Mono.error(new InvalidRequestException("API tokens are for users who signed in through the web UI ("
                        + SignInController.LOGIN + "), so that the provider can be asked whether they may still come in; "
                        + subject + " has not"));
            }
            if (known.get().disabled()) {
                return Mono.error(new InvalidRequestException(subject + " is no longer allowed in by the provider"));
            }
            if (!known.get().role().atLeast(role)) {
                return Mono.error(new InvalidRequestException("the provider gives " + subject + " the role " + known.get().role().wire()
                        + ", below " + role.wire()));
            }
            return Mono.<Void>empty();
        });
    }

    /** The caller's own tokens; every user's for an admin that asks for {@code all}. Newest first. */
    public Flux<ApiToken> list(Principal caller, boolean all) {
        if (all && caller.role() != Role.ADMIN) {
            return Flux.error(new NotPermittedException(caller, "list other users' API tokens"));
        }
        DatabaseClient.GenericExecuteSpec query = all || caller.daemon()
                ? db.sql("SELECT " + COLUMNS + " FROM api_token ORDER BY created_at DESC, id")
                : db.sql("SELECT " + COLUMNS + " FROM api_token WHERE subject = :subject ORDER BY created_at DESC, id")
                        .bind("subject", caller.subject());
        return query.map(row -> row(row)).all().map(Row::token);
    }

    /**
     * Revokes the caller's token (any user's for an admin): it stops letting its holder in at once here, and within
     * {@code tether.identity.token-recheck} on other replicas. Revoking a revoked token changes nothing.
     */
    public Mono<ApiToken> revoke(Principal caller, String id) {
        return db.sql("SELECT " + COLUMNS + " FROM api_token WHERE id = :id").bind("id", id).map(row -> row(row)).one()
                .filter(row -> caller.role() == Role.ADMIN || caller.daemon() || row.token().subject().equals(caller.subject()))
                .switchIfEmpty(Mono.error(() -> new TokenNotFoundException(id)))
                .flatMap(row -> {
                    if (row.token().revokedAt().isPresent()) {
                        return Mono.just(row.token());
                    }
                    Instant now = clock.instant();
                    return db.sql("UPDATE api_token SET revoked_at = :now WHERE id = :id AND revoked_at IS NULL")
                            .bind("now", now.toEpochMilli()).bind("id", id)
                            .fetch().rowsUpdated()
                            .doOnSuccess(rows -> {
                                known.remove(id);
                                audit.record(AuditEvent.of(caller, "token.revoke", id + " of " + row.token().subject(), "ok"));
                            })
                            .thenReturn(revoked(row.token(), now));
                });
    }

    private static Instant min(Instant one, Instant other) {
        return one.isBefore(other) ? one : other;
    }

    private static ApiToken revoked(ApiToken token, Instant at) {
        return new ApiToken(token.id(), token.subject(), token.name(), token.role(), token.createdBy(), token.createdAt(),
                token.expiresAt(), Optional.of(at), token.lastUsedAt());
    }

    private static Row row(Readable row) {
        Long revoked = row.get("revoked_at", Long.class);
        Long used = row.get("last_used_at", Long.class);
        ApiToken token = new ApiToken(Columns.text(row, "id"), Columns.text(row, "subject"), Columns.text(row, "name"),
                Role.parse(Columns.text(row, "role")).orElse(Role.VIEWER), Columns.text(row, "created_by"),
                Instant.ofEpochMilli(Columns.number(row, "created_at")), Instant.ofEpochMilli(Columns.number(row, "expires_at")),
                Optional.ofNullable(revoked).map(Instant::ofEpochMilli), Optional.ofNullable(used).map(Instant::ofEpochMilli));
        return new Row(token, Columns.text(row, "secret_hash"));
    }

    private static String hash(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException("every Java has SHA-256", impossible);
        }
    }

    private static String randomId() {
        StringBuilder id = new StringBuilder(ID_LENGTH);
        for (int i = 0; i < ID_LENGTH; i++) {
            id.append(ID_ALPHABET[RANDOM.nextInt(ID_ALPHABET.length)]);
        }
        return id.toString();
    }

    private static String randomSecret() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
