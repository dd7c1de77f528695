package dev.tether.oauth;

import java.time.Clock;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.identity.Principals;
import dev.tether.mcp.AuthorizationExpiredException;
import dev.tether.mcp.BearerToken;
import dev.tether.session.BearerTokens;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionNotFoundException;
import dev.tether.store.ConnectionStore;
import dev.tether.store.CredentialStore;
import dev.tether.store.OAuthClient;
import dev.tether.store.OAuthClientStore;
import dev.tether.store.OAuthGrant;
import dev.tether.store.Owner;

/**
 * The access tokens of connections made by OAuth flows, as remote sessions send them. A token is refreshed
 * lazily, {@code tether.oauth.refresh-skew} before it expires: with its refresh token, or for a
 * client-credentials client by asking again. Refreshing is single-flight per connection, so any number of
 * concurrent calls at expiry cause one request to the token endpoint. A refused refresh ({@code invalid_grant}), a
 * missing refresh token or a removed client mean the user must authorize again: the connection is remembered as
 * such and every ask fails with {@link AuthorizationExpiredException} until a new flow completes.
 *
 * <p>Tokens are credentials of the connection under {@link OAuthGrant#ACCESS_TOKEN} and {@link OAuthGrant#REFRESH_TOKEN}, sealed in
 * the store like every credential, and held here in memory once read.
 */
@Component
public final class OAuthTokens implements BearerTokens {

    private static final Logger log = LoggerFactory.getLogger(OAuthTokens.class);

    private static final String ACCESS_TOKEN = OAuthGrant.ACCESS_TOKEN;
    private static final String REFRESH_TOKEN = OAuthGrant.REFRESH_TOKEN;

    /** A connection's tokens. */
    record Tokens(String access, Optional<String> refresh, Optional<Long> expiresAt) {

        @Override
        public String toString() {
            return "Tokens[***, expiresAt=" + expiresAt + "]";
        }
    }

    private final ConnectionStore connections;
    private final CredentialStore credentials;
    private final OAuthClientStore clients;
    private final TokenEndpoint tokenEndpoint;
    private final OAuthProperties properties;
    private final Clock clock;
    private final Counter refreshes;
    private final Map<ConnectionKey, Tokens> held = new ConcurrentHashMap<>();
    private final Map<ConnectionKey, Mono<Tokens>> refreshing = new ConcurrentHashMap<>();
    private final Map<ConnectionKey, String> expired = new ConcurrentHashMap<>();
    /** Scope a server refused a request for want of (with what the token had): what the next authorization asks for. */
    private final Map<ConnectionKey, String> wanted = new ConcurrentHashMap<>();

    OAuthTokens(ConnectionStore connections, CredentialStore credentials, OAuthClientStore clients, TokenEndpoint tokenEndpoint,
            OAuthProperties properties, Clock clock, MeterRegistry registry) {
        this.connections = connections;
        this.credentials = credentials;
        this.clients = clients;
        this.tokenEndpoint = tokenEndpoint;
        this.properties = properties;
        this.clock = clock;
        this.refreshes = Counter.builder("tether.oauth.refreshes").description("access tokens refreshed or re-minted")
                .register(registry);
    }

    /** For a connection made by an OAuth flow, where its sessions get their bearer token; empty for any other. */
    @Override
    public Optional<BearerToken> bearer(Connection connection) {
        ConnectionKey key = connection.key();
        return connection.oauth().map(grant -> new BearerToken() {

            @Override
            public Mono<String> token() {
                return OAuthTokens.this.token(key);
            }

            @Override
            public Mono<String> renewed(String rejected) {
                return OAuthTokens.this.renewed(key, rejected);
            }

            @Override
            public String needsScope(String challenged) {
                return OAuthTokens.this.needsScope(key, grant.scope(), challenged);
            }
        });
    }

    /**
     * A server refused a request of this connection for want of {@code challenged} scope: the next authorization of the
     * connection asks for the union of that, the scope the token was granted, and any asked for before (as the MCP
     * specification's step-up authorization does), so the new token keeps what the old one could do.
     */
    String needsScope(ConnectionKey key, Optional<String> granted, String challenged) {
        String union = wanted.merge(key, union(granted.orElse(""), challenged), OAuthTokens::union);
        log.info("MCP server of {} wants scope {} that its token lacks: its next authorization asks for {}", key, challenged, union);
        return union;
    }

    /** What the next authorization of this connection asks for, when a server wanted more than its token has. */
    Optional<String> wantedScope(ConnectionKey key) {
        return Optional.ofNullable(wanted.get(key)).filter(scope -> !scope.isEmpty());
    }

    /** RFC 6749 §3.3 scopes, space-separated: each once, in first-seen order. */
    static String union(String first, String second) {
        java.util.Set<String> scopes = new java.util.LinkedHashSet<>();
        for (String scope : (first + " " + second).split("\\s+")) {
            if (!scope.isEmpty()) {
                scopes.add(scope);
            }
        }
        return String.join(" ", scopes);
    }

    /**
     * A new access token for one the server refused before its expiry: refreshed (single-flight, as at expiry) when
     * {@code rejected} is still the token held; the one held when a refresh already replaced it.
     */
    public Mono<String> renewed(ConnectionKey key, String rejected) {
        return authorized(key)
                .flatMap(connection -> tokens(connection).flatMap(tokens -> tokens.access().equals(rejected) ? sharedRefresh(connection)
                        : Mono.just(tokens)))
                .map(Tokens::access);
    }

    /** The access token to send now, refreshed first when it is about to expire. */
    public Mono<String> token(ConnectionKey key) {
        return authorized(key)
                .flatMap(connection -> tokens(connection).flatMap(tokens -> fresh(tokens) ? Mono.just(tokens) : sharedRefresh(connection)))
                .map(Tokens::access);
    }

    /** The connection, unless it needs the user to authorize again ({@link AuthorizationExpiredException}). */
    private Mono<Connection> authorized(ConnectionKey key) {
        return connections.find(key)
                .switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key)))
                .flatMap(connection -> {
                    String reason = expired.get(key);
                    return reason != null ? Mono.error(new AuthorizationExpiredException(reason)) : Mono.just(connection);
                });
    }

    /** Keeps tokens a flow just received; the store already holds them. */
    void remember(ConnectionKey key, Tokens tokens) {
        held.put(key, tokens);
        expired.remove(key);
        wanted.remove(key);
    }

    /** The credentials that hold these tokens. */
    static Map<String, String> credentialsOf(Tokens tokens) {
        Map<String, String> values = new LinkedHashMap<>();
        values.put(ACCESS_TOKEN, tokens.access());
        tokens.refresh().ifPresent(refresh -> values.put(REFRESH_TOKEN, refresh));
        return values;
    }

    private Mono<Tokens> tokens(Connection connection) {
        Tokens known = held.get(connection.key());
        if (known != null) {
            return Mono.just(known);
        }
        return credentials.credentials(connection.key()).flatMap(values -> {
            String access = values.get(ACCESS_TOKEN);
            if (access == null) {
                return Mono.error(new AuthorizationExpiredException("OAuth connection " + connection.key()
                        + " holds no access token: re-authorization required"));
            }
            Tokens tokens = new Tokens(access, Optional.ofNullable(values.get(REFRESH_TOKEN)),
                    connection.oauth().flatMap(OAuthGrant::expiresAt));
            held.putIfAbsent(connection.key(), tokens);
            return Mono.just(tokens);
        });
    }

    private boolean fresh(Tokens tokens) {
        return tokens.expiresAt().map(at -> clock.millis() + properties.refreshSkew().toMillis() < at).orElse(true);
    }

    /** One refresh per connection at a time: whoever asks while it runs gets its outcome. */
    private Mono<Tokens> sharedRefresh(Connection connection) {
        ConnectionKey key = connection.key();
        return refreshing.computeIfAbsent(key, k -> {
            AtomicReference<Mono<Tokens>> self = new AtomicReference<>();
            // Cached, so that an asker who leaves does not cancel the refresh the others wait for.
            Mono<Tokens> shared = Mono.defer(() -> refresh(connection))
                    .doFinally(signal -> refreshing.remove(k, self.get()))
                    .cache();
            self.set(shared);
            return shared;
        });
    }

    private Mono<Tokens> refresh(Connection connection) {
        ConnectionKey key = connection.key();
        OAuthGrant grant = connection.oauth().orElseThrow();
        // The daemon's bookkeeping: whoever's call found the token stale, the connection's own row is renewed.
        String clientSubject = grant.clientOwner() == Owner.ORG ? "" : key.subject();
        return clients.client(grant.clientOwner(), clientSubject, grant.client())
                .switchIfEmpty(Mono.error(() -> expire(key, "the OAuth client '" + grant.client() + "' of connection " + key
                        + " was removed: re-authorization required")))
                .flatMap(client -> tokens(connection).flatMap(current -> renew(key, client, grant, current)
                        .map(token -> new Tokens(token.accessToken(), token.refreshToken().or(current::refresh),
                                token.expiresIn().map(seconds -> clock.millis() + seconds * 1000)))))
                .onErrorMap(TokenRefusedException.class, ex -> ex.invalidGrant()
                        ? expire(key, "the authorization server refused to renew the access token of " + key
                                + " (invalid_grant): re-authorization required")
                        : ex)
                .flatMap(tokens -> connections.update(connection.withOAuth(grant.withExpiresAt(tokens.expiresAt())),
                                Optional.of(credentialsOf(tokens)))
                        .switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key)))
                        .doOnNext(updated -> {
                            held.put(key, tokens);
                            refreshes.increment();
                            log.info("OAuth access token of {} renewed, expires at {}", key, tokens.expiresAt().orElse(null));
                        })
                        .thenReturn(tokens))
                .contextWrite(Principals.asDaemon());
    }

    private Mono<TokenResponse> renew(ConnectionKey key, OAuthClient client, OAuthGrant grant, Tokens current) {
        if (client.grant().equals(OAuthClient.CLIENT_CREDENTIALS)) {
            List<String> scopes = grant.scope().map(scope -> Arrays.stream(scope.split(" ")).filter(s -> !s.isBlank()).toList())
                    .orElse(List.of());
            return tokenEndpoint.clientCredentials(client, scopes);
        }
        return current.refresh().map(refresh -> tokenEndpoint.refresh(client, refresh))
                .orElseGet(() -> Mono.error(expire(key, "the access token of " + key
                        + " expired and the authorization server gave no refresh token: re-authorization required")));
    }

    private AuthorizationExpiredException expire(ConnectionKey key, String reason) {
        expired.put(key, reason);
        held.remove(key);
        log.warn("{}", reason);
        return new AuthorizationExpiredException(reason);
    }
}
