package dev.tether.oauth;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.catalog.CatalogService;
import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.session.SessionPool;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionNames;
import dev.tether.store.ConnectionStore;
import dev.tether.store.OAuthClient;
import dev.tether.store.OAuthClientStore;
import dev.tether.store.OAuthGrant;
import dev.tether.store.Owner;

/**
 * The flows that make a connection through an OAuth client ({@link OAuthClients} makes the clients). An
 * authorization-code flow is a session keyed by its {@code state} (256 random bits), holding the PKCE verifier; it is redeemable once, for {@code tether.oauth.session-ttl}, and can be cancelled.
 * A client-credentials client connects at once. Sessions live in this daemon's memory: the browser comes back to
 * the daemon that started the flow.
 */
@Component
public final class OAuthFlows {

    private static final Logger log = LoggerFactory.getLogger(OAuthFlows.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Flows in flight at most; a caller that starts more without finishing any gets an error, not our memory. */
    static final int MAX_SESSIONS = 1000;

    /** Body of {@code POST /api/oauth/start}. */
    public record Start(String client, Owner clientOwner, Owner owner, String name, String integration, String template,
            Optional<String> identityLabel) {
    }

    /** What {@code start} led to: a connection at once, or the URL to send the browser to. */
    public sealed interface Started permits Connected, Redirect {
    }

    public record Connected(Connection connection) implements Started {
    }

    public record Redirect(String authorizationUrl, String state) implements Started {
    }

    /** The outcome of a browser flow, kept for {@code GET /api/oauth/await/{state}}. */
    public record Outcome(String state, Optional<Connection> connection, String error, Optional<String> details) {

        public boolean ok() {
            return connection.isPresent();
        }
    }

    /**
     * A flow in flight, for the principal that started it: only it completes or cancels it, and the connection is its.
     * {@code server} is the authorization server the request went to, when discovery found it: its response must come
     * from that issuer (RFC 9207).
     */
    private record Session(Start start, Principal principal, String redirectUri, String verifier, long expiresAt,
            Optional<OAuthDiscovery.AuthorizationServer> server) {

        /** The response's {@code iss} against the issuer the request went to; an {@link IssuerMismatchException} when wrong. */
        void checkIssuer(Optional<String> iss) {
            server.ifPresent(as -> {
                if (iss.isEmpty() && as.issParameterSupported()) {
                    throw new IssuerMismatchException("the authorization response carries no iss, though " + as.issuer()
                            + " sends it with every response (RFC 9207): refused");
                }
                iss.filter(issuer -> !issuer.equals(as.issuer())).ifPresent(issuer -> {
                    throw new IssuerMismatchException("the authorization response came from issuer " + issuer
                            + ", but the authorization request went to " + as.issuer() + " (RFC 9207): refused");
                });
            });
        }

        @Override
        public String toString() {
            return "Session[" + start.owner().wire() + "/" + start.integration() + "/" + start.name() + "]";
        }
    }

    private record Kept(Outcome outcome, long expiresAt) {
    }

    private final OAuthClientStore clients;
    private final ConnectionStore connections;
    private final TokenEndpoint tokenEndpoint;
    private final OAuthDiscovery discovery;
    private final ClientMetadataDocument document;
    private final OAuthTokens tokens;
    private final OAuthProperties properties;
    private final SessionPool mcpSessions;
    private final CatalogService catalogs;
    private final Clock clock;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private final Map<String, Kept> outcomes = new ConcurrentHashMap<>();

    OAuthFlows(OAuthClientStore clients, ConnectionStore connections, TokenEndpoint tokenEndpoint, OAuthDiscovery discovery,
            ClientMetadataDocument document, OAuthTokens tokens, OAuthProperties properties, SessionPool mcpSessions,
            CatalogService catalogs, Clock clock) {
        this.clients = clients;
        this.connections = connections;
        this.tokenEndpoint = tokenEndpoint;
        this.discovery = discovery;
        this.document = document;
        this.tokens = tokens;
        this.properties = properties;
        this.mcpSessions = mcpSessions;
        this.catalogs = catalogs;
        this.clock = clock;
    }

    /** Starts a flow: a connection at once for client credentials, else the authorization URL and its state. */
    public Mono<Started> start(Start input, String redirectUri) {
        if (input.owner() == Owner.ORG && input.clientOwner() == Owner.USER) {
            return Mono.error(new OAuthException(OAuthException.START, "A Workspace connection must use a Workspace app."));
        }
        return Principals.current().flatMap(caller -> clients.client(input.clientOwner(), input.clientOwner().subjectFor(caller), input.client())
                .switchIfEmpty(Mono.error(() -> new OAuthException(OAuthException.START, "OAuth client not found: " + input.client())))
                .flatMap(client -> client.grant().equals(OAuthClient.CLIENT_CREDENTIALS)
                        ? tokenEndpoint.clientCredentials(client, List.of())
                                .onErrorMap(error -> error instanceof TokenRefusedException || error instanceof OAuthHttpException
                                        || error instanceof IllegalArgumentException,
                                        error -> new OAuthException(OAuthException.START, "OAuth client-credentials exchange failed: "
                                                + error.getMessage()))
                                .flatMap(token -> mint(input, caller, client, token))
                                .<Started>map(Connected::new)
                        : Mono.fromRunnable(() -> checkDocumentCurrent(client))
                                .then(discovery.serverOf(client))
                                .onErrorMap(IssuerMismatchException.class, ex -> new OAuthException(OAuthException.START, ex.getMessage()))
                                .map(Optional::of).defaultIfEmpty(Optional.empty())
                                .map(server -> redirect(input, caller, client, document.describes(client)
                                        ? document.redirectUri(redirectUri) : redirectUri, server))));
    }

    /**
     * A client that went by Tether's client metadata document at another URL than today's (the public base URL
     * changed, or was removed) would send the server to a document that is not there: it must be registered again.
     */
    private void checkDocumentCurrent(OAuthClient client) {
        if (client.dynamic() && client.clientSecret().isEmpty() && client.clientId().endsWith(ClientMetadataDocument.PATH)
                && !document.describes(client)) {
            throw new OAuthException(OAuthException.START, "OAuth client " + client.slug() + " goes by Tether's client metadata document at "
                    + client.clientId() + ", but Tether publishes " + document.url().map(url -> "it at " + url).orElse("none")
                    + " (tether.oauth.public-base-url changed): register the client again");
        }
    }

    private Started redirect(Start input, Principal caller, OAuthClient client, String redirectUri,
            Optional<OAuthDiscovery.AuthorizationServer> server) {
        long now = clock.millis();
        sessions.values().removeIf(session -> session.expiresAt() <= now);
        if (sessions.size() >= MAX_SESSIONS) {
            throw new OAuthException(OAuthException.START, "too many OAuth authorizations in flight (" + MAX_SESSIONS
                    + "): complete or cancel some first");
        }
        String verifier = random(32);
        String state = random(32);
        StringBuilder url = new StringBuilder(client.authorizationUrl())
                .append(client.authorizationUrl().contains("?") ? '&' : '?')
                .append("response_type=code")
                .append("&client_id=").append(encode(client.clientId()))
                .append("&redirect_uri=").append(encode(redirectUri))
                .append("&state=").append(state)
                .append("&code_challenge=").append(challenge(verifier))
                .append("&code_challenge_method=S256");
        client.resource().ifPresent(resource -> url.append("&resource=").append(encode(resource)));
        // A personal connection needs its user: checked now (keyOf), not when the browser comes back.
        tokens.wantedScope(keyOf(input, caller)).ifPresent(scope -> url.append("&scope=").append(encode(scope)));
        sessions.put(state, new Session(input, caller, redirectUri, verifier, now + properties.sessionTtl().toMillis(), server));
        return new Redirect(url.toString(), state);
    }

    /**
     * Redeems a session once: its code is exchanged and the connection made (or its tokens replaced). An unknown,
     * expired, cancelled or spent state is {@link OAuthSessionNotFoundException}; a refused code spends the session
     * ({@code restartRequired}); a token endpoint that cannot be reached or answers garbage leaves it redeemable.
     * A response from another issuer than the one the request went to ({@code iss}, RFC 9207) spends the session
     * before its code goes anywhere.
     */
    public Mono<Connection> complete(String state, String code, Optional<String> iss) {
        return Principals.current().flatMap(caller -> {
            Session session = take(state, caller);
            if (session == null || session.expiresAt() <= clock.millis()) {
                return Mono.error(new OAuthSessionNotFoundException(state));
            }
            try {
                session.checkIssuer(iss);
            }
            catch (IssuerMismatchException ex) {
                log.warn("OAuth flow for {} refused: {}", session, ex.getMessage());
                return Mono.error(new OAuthException(OAuthException.COMPLETE, ex.getMessage(), Optional.of(true)));
            }
            Start start = session.start();
            Principal owner = session.principal();
            return clients.client(start.clientOwner(), start.clientOwner().subjectFor(owner), start.client())
                    .switchIfEmpty(Mono.error(() -> new OAuthException(OAuthException.COMPLETE,
                            "OAuth client not found: " + start.client(), Optional.of(true))))
                    .flatMap(client -> tokenEndpoint.authorizationCode(client, code, session.redirectUri(), session.verifier())
                            .onErrorMap(TokenRefusedException.class, ex -> new OAuthException(OAuthException.COMPLETE,
                                    "OAuth code exchange failed: " + ex.getMessage(), Optional.of(ex.invalidGrant())))
                            .onErrorMap(OAuthHttpException.class, ex -> new OAuthException(OAuthException.COMPLETE,
                                    "OAuth code exchange failed: " + ex.getMessage(), Optional.of(false)))
                            .doOnError(error -> error instanceof OAuthException oauth && oauth.restartRequired().equals(Optional.of(false)),
                                    error -> sessions.putIfAbsent(state, session))
                            .flatMap(token -> mint(start, owner, client, token)))
                    // The browser's callback comes without credentials: the flow completes for whoever started it.
                    .contextWrite(Principals.as(owner));
        });
    }

    /**
     * Removes the session of {@code state} for {@code caller}: the principal that started it, or the daemon (the
     * browser's callback, which the unguessable state alone admits). Another user finds nothing, and the flow stays.
     */
    private @Nullable Session take(String state, Principal caller) {
        Session[] taken = new Session[1];
        sessions.computeIfPresent(state, (key, session) -> {
            if (caller.daemon() || session.principal().subject().equals(caller.subject())) {
                taken[0] = session;
                return null;
            }
            return session;
        });
        return taken[0];
    }

    /**
     * The callback's work: completes the flow, and keeps its outcome for whoever polls {@code await}. Never fails.
     * Only flows Tether started leave an outcome: a state it never issued (or no longer holds) fills no memory.
     */
    public Mono<Outcome> callback(String state, Optional<String> code, Optional<String> error, Optional<String> errorDescription,
            Optional<String> iss) {
        if (error.isPresent() || code.isEmpty()) {
            Session session = sessions.remove(state);
            boolean known = session != null;
            String why = error.map(e -> "the authorization server answered " + e + errorDescription.map(d -> ": " + d).orElse(""))
                    .orElse("the authorization server sent no code");
            if (session != null) {
                // An error from another issuer is a mix-up's, and its text the attacker's: the mismatch is what to tell.
                try {
                    session.checkIssuer(iss);
                }
                catch (IssuerMismatchException ex) {
                    why = Objects.requireNonNull(ex.getMessage());
                }
            }
            Outcome outcome = new Outcome(state, Optional.empty(), known ? "Could not complete authentication"
                    : "OAuth session expired or not found", Optional.of(why));
            return Mono.just(known ? keep(outcome) : outcome);
        }
        return complete(state, code.get(), iss)
                .map(connection -> keep(new Outcome(state, Optional.of(connection), "", Optional.empty())))
                .onErrorResume(failure -> Mono.just(failure instanceof OAuthSessionNotFoundException ? failed(state, failure)
                        : keep(failed(state, failure))));
    }

    private Outcome keep(Outcome outcome) {
        long now = clock.millis();
        outcomes.values().removeIf(kept -> kept.expiresAt() <= now);
        if (outcomes.size() < MAX_SESSIONS) {
            outcomes.put(outcome.state(), new Kept(outcome, now + properties.resultTtl().toMillis()));
        }
        return outcome;
    }

    /** The outcome of the browser flow with this state, once: a second ask, or one before it ended, finds nothing. */
    public Optional<Outcome> awaitOutcome(String state) {
        return Optional.ofNullable(outcomes.remove(state)).filter(kept -> kept.expiresAt() > clock.millis()).map(Kept::outcome);
    }

    /** Drops the caller's flow with this state; answers true whether or not it was in flight, as Executor does. */
    public Mono<Boolean> cancel(String state) {
        return Principals.current().doOnNext(caller -> take(state, caller)).thenReturn(true);
    }

    private static Outcome failed(String state, Throwable failure) {
        if (failure instanceof OAuthSessionNotFoundException) {
            return new Outcome(state, Optional.empty(), "OAuth session expired or not found", Optional.of("State: " + state));
        }
        if (failure instanceof OAuthException oauth) {
            return new Outcome(state, Optional.empty(), "Could not complete authentication",
                    Optional.of(Objects.requireNonNull(oauth.getMessage())));
        }
        log.error("OAuth callback failed for an unexpected reason", failure);
        return new Outcome(state, Optional.empty(), "Authentication failed", Optional.empty());
    }

    /** Stores the tokens and makes the connection, or replaces the tokens of the one that is there (re-authorization). */
    private Mono<Connection> mint(Start target, Principal owner, OAuthClient client, TokenResponse token) {
        ConnectionKey key = keyOf(target, owner);
        OAuthTokens.Tokens minted = new OAuthTokens.Tokens(token.accessToken(), token.refreshToken(),
                token.expiresIn().map(seconds -> clock.millis() + seconds * 1000));
        OAuthGrant grant = new OAuthGrant(client.slug(), target.clientOwner(), token.scope(), minted.expiresAt());
        Map<String, String> values = OAuthTokens.credentialsOf(minted);
        return connections.find(key)
                .flatMap(existing -> connections.update(new Connection(key, existing.template(),
                        target.identityLabel().or(existing::identityLabel), existing.lastHealth(), Optional.of(grant)), Optional.of(values)))
                .switchIfEmpty(Mono.defer(() -> connections.create(new Connection(key, target.template(), target.identityLabel(),
                        Optional.empty(), Optional.of(grant)), values)))
                .doOnNext(connection -> {
                    tokens.remember(key, minted);
                    log.info("OAuth connection {} authorized through client {}", key, client);
                })
                // A session of the connection still holds the old tokens: ended, the next one starts with these; the
                // catalog is synced with what they may now list.
                .flatMap(connection -> mcpSessions.retire(key).then(catalogs.changed(key.integration())).thenReturn(connection));
    }

    /** The connection a flow makes: a personal one is {@code caller}'s, which fails at once for a caller with no user. */
    private static ConnectionKey keyOf(Start target, Principal caller) {
        return ConnectionKey.of(target.owner(), target.integration(), ConnectionNames.identifier(target.name()), caller);
    }

    private static String random(int bytes) {
        byte[] value = new byte[bytes];
        RANDOM.nextBytes(value);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(value);
    }

    /** RFC 7636 S256: base64url(SHA-256(verifier)). */
    static String challenge(String verifier) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(verifier.getBytes(StandardCharsets.US_ASCII));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", ex);
        }
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

}
