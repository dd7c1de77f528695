package dev.tether.oauth;

import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

import dev.tether.catalog.CatalogService;
import dev.tether.session.SessionPool;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionStore;
import dev.tether.store.OAuthClient;
import dev.tether.store.OAuthClientStore;
import dev.tether.store.OAuthGrant;
import dev.tether.store.Owner;

/**
 * Executor's OAuth operations: clients made by hand or by dynamic registration, and the flows that make a
 * connection through one. An authorization-code flow is a session keyed by its {@code state} (256 random bits),
 * holding the PKCE verifier; it is redeemable once, for {@code tether.oauth.session-ttl}, and can be cancelled.
 * A client-credentials client connects at once. Sessions live in this daemon's memory: the browser comes back to
 * the daemon that started the flow.
 */
@Component
public final class OAuthFlows {

    private static final Logger log = LoggerFactory.getLogger(OAuthFlows.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Flows in flight at most; a caller that starts more without finishing any gets an error, not our memory. */
    static final int MAX_SESSIONS = 1000;

    /** Body of {@code POST /api/oauth/clients}. */
    public record NewClient(Owner owner, String slug, String authorizationUrl, String tokenUrl, String grant, String clientId,
            String clientSecret, Optional<String> resource) {
    }

    /** Body of {@code POST /api/oauth/clients/register-dynamic}. */
    public record DynamicRegistration(Owner owner, String slug, String registrationEndpoint, String authorizationUrl,
            String tokenUrl, Optional<String> resource, List<String> scopes, Optional<List<String>> tokenEndpointAuthMethodsSupported,
            Optional<String> clientName, Optional<String> originIntegration) {
    }

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

    private record Session(Start start, String redirectUri, String verifier, long expiresAt) {

        @Override
        public String toString() {
            return "Session[" + start.owner().wire() + "/" + start.integration() + "/" + start.name() + "]";
        }
    }

    private record Kept(Outcome outcome, long expiresAt) {
    }

    private final OAuthClientStore clients;
    private final ConnectionStore connections;
    private final OAuthDiscovery discovery;
    private final TokenEndpoint tokenEndpoint;
    private final OAuthTokens tokens;
    private final OAuthHttp http;
    private final OAuthProperties properties;
    private final LocalOrigin localOrigin;
    private final SessionPool mcpSessions;
    private final CatalogService catalogs;
    private final Clock clock;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private final Map<String, Kept> outcomes = new ConcurrentHashMap<>();

    OAuthFlows(OAuthClientStore clients, ConnectionStore connections, OAuthDiscovery discovery, TokenEndpoint tokenEndpoint,
            OAuthTokens tokens, OAuthHttp http, OAuthProperties properties, LocalOrigin localOrigin, SessionPool mcpSessions,
            CatalogService catalogs, Clock clock) {
        this.clients = clients;
        this.connections = connections;
        this.discovery = discovery;
        this.tokenEndpoint = tokenEndpoint;
        this.tokens = tokens;
        this.http = http;
        this.properties = properties;
        this.localOrigin = localOrigin;
        this.mcpSessions = mcpSessions;
        this.catalogs = catalogs;
        this.clock = clock;
    }

    /** The redirect URI on Tether's own origin: the configured web base URL, else the origin the request came to. */
    public String redirectUri(String requestOrigin) {
        return properties.webBase().orElse(requestOrigin) + "/api/oauth/callback";
    }

    /** The redirect URI for a flow started without a request (from code): the configured web base URL, else this daemon's own origin. */
    public String redirectUri() {
        return redirectUri(localOrigin.get().orElseThrow(() -> new IllegalStateException("the API server is not bound yet")));
    }

    public Mono<ProbeResult> probe(String url) {
        return discovery.probe(url);
    }

    public Flux<OAuthClient> clients() {
        return clients.clients();
    }

    /** Saves a client given by hand; an endpoint Tether would not send secrets to is an {@link IllegalArgumentException}. */
    public Mono<String> createClient(NewClient input) {
        return Mono.fromCallable(() -> {
                    String grant = input.grant();
                    if (!grant.equals(OAuthClient.AUTHORIZATION_CODE) && !grant.equals(OAuthClient.CLIENT_CREDENTIALS)) {
                        throw new IllegalArgumentException("`grant` must be authorization_code or client_credentials, was " + grant);
                    }
                    Endpoints.check(input.tokenUrl(), "tokenUrl");
                    input.resource().ifPresent(resource -> Endpoints.check(resource, "resource"));
                    if (grant.equals(OAuthClient.AUTHORIZATION_CODE)) {
                        checkAuthorizationUrl(input.authorizationUrl(), input.tokenUrl());
                    }
                    return new OAuthClient(input.owner(), input.slug(), grant, input.authorizationUrl(), input.tokenUrl(),
                            input.clientId(), Optional.of(input.clientSecret()), input.resource(), false, Optional.empty());
                })
                .flatMap(clients::saveClient)
                .map(OAuthClient::slug);
    }

    public Mono<Boolean> removeClient(Owner owner, String slug) {
        return clients.removeClient(owner, slug);
    }

    /**
     * Registers Tether as a client of the authorization server (RFC 7591): a public PKCE client ({@code none}) unless
     * the server allows only confidential ones, then {@code client_secret_post}.
     */
    public Mono<String> registerDynamic(DynamicRegistration input, String redirectUri) {
        return Mono.defer(() -> {
                    URI endpoint = Endpoints.check(input.registrationEndpoint(), "registrationEndpoint");
                    Endpoints.check(input.tokenUrl(), "tokenUrl");
                    checkAuthorizationUrl(input.authorizationUrl(), input.tokenUrl());
                    input.resource().ifPresent(resource -> Endpoints.check(resource, "resource"));
                    List<String> methods = input.tokenEndpointAuthMethodsSupported().orElse(List.of());
                    String method = methods.isEmpty() || methods.contains("none") ? "none" : "client_secret_post";
                    Map<String, Object> metadata = new LinkedHashMap<>();
                    metadata.put("client_name", input.clientName().orElse("Tether"));
                    metadata.put("redirect_uris", List.of(redirectUri));
                    metadata.put("grant_types", List.of("authorization_code", "refresh_token"));
                    metadata.put("response_types", List.of("code"));
                    metadata.put("token_endpoint_auth_method", method);
                    if (!input.scopes().isEmpty()) {
                        metadata.put("scope", String.join(" ", input.scopes()));
                    }
                    return http.postJson(endpoint, metadata).map(reply -> {
                        JsonNode body = http.json(endpoint, reply);
                        if (!reply.ok()) {
                            String error = OAuthDiscovery.text(body.path("error")).orElse("HTTP " + reply.status());
                            throw new IllegalArgumentException("the registration endpoint refused: " + error
                                    + OAuthDiscovery.text(body.path("error_description")).map(d -> ": " + d).orElse(""));
                        }
                        String clientId = OAuthDiscovery.text(body.path("client_id"))
                                .orElseThrow(() -> new IllegalArgumentException("the registration endpoint answered without a client_id"));
                        return new OAuthClient(input.owner(), input.slug(), OAuthClient.AUTHORIZATION_CODE, input.authorizationUrl(),
                                input.tokenUrl(), clientId, OAuthDiscovery.text(body.path("client_secret")), input.resource(), true,
                                input.originIntegration());
                    });
                })
                .onErrorMap(error -> error instanceof IllegalArgumentException || error instanceof OAuthHttpException,
                        error -> new OAuthException(OAuthException.REGISTER_DYNAMIC, "Dynamic Client Registration failed: " + error.getMessage()))
                .flatMap(clients::saveClient)
                .map(OAuthClient::slug);
    }

    /** Starts a flow: a connection at once for client credentials, else the authorization URL and its state. */
    public Mono<Started> start(Start input, String redirectUri) {
        if (input.owner() == Owner.ORG && input.clientOwner() == Owner.USER) {
            return Mono.error(new OAuthException(OAuthException.START, "A Workspace connection must use a Workspace app."));
        }
        return clients.client(input.clientOwner(), input.client())
                .switchIfEmpty(Mono.error(() -> new OAuthException(OAuthException.START, "OAuth client not found: " + input.client())))
                .flatMap(client -> client.grant().equals(OAuthClient.CLIENT_CREDENTIALS)
                        ? tokenEndpoint.clientCredentials(client, List.of())
                                .onErrorMap(error -> error instanceof TokenRefusedException || error instanceof OAuthHttpException
                                        || error instanceof IllegalArgumentException,
                                        error -> new OAuthException(OAuthException.START, "OAuth client-credentials exchange failed: "
                                                + error.getMessage()))
                                .flatMap(token -> mint(input, client, token))
                                .<Started>map(Connected::new)
                        : Mono.fromCallable(() -> redirect(input, client, redirectUri)));
    }

    private Started redirect(Start input, OAuthClient client, String redirectUri) {
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
        sessions.put(state, new Session(input, redirectUri, verifier, now + properties.sessionTtl().toMillis()));
        return new Redirect(url.toString(), state);
    }

    /**
     * Redeems a session once: its code is exchanged and the connection made (or its tokens replaced). An unknown,
     * expired, cancelled or spent state is {@link OAuthSessionNotFoundException}; a refused code spends the session
     * ({@code restartRequired}); a token endpoint that cannot be reached or answers garbage leaves it redeemable.
     */
    public Mono<Connection> complete(String state, String code) {
        return Mono.defer(() -> {
            Session session = sessions.remove(state);
            if (session == null || session.expiresAt() <= clock.millis()) {
                return Mono.error(new OAuthSessionNotFoundException(state));
            }
            Start start = session.start();
            return clients.client(start.clientOwner(), start.client())
                    .switchIfEmpty(Mono.error(() -> new OAuthException(OAuthException.COMPLETE,
                            "OAuth client not found: " + start.client(), Optional.of(true))))
                    .flatMap(client -> tokenEndpoint.authorizationCode(client, code, session.redirectUri(), session.verifier())
                            .onErrorMap(TokenRefusedException.class, ex -> new OAuthException(OAuthException.COMPLETE,
                                    "OAuth code exchange failed: " + ex.getMessage(), Optional.of(ex.invalidGrant())))
                            .onErrorMap(OAuthHttpException.class, ex -> new OAuthException(OAuthException.COMPLETE,
                                    "OAuth code exchange failed: " + ex.getMessage(), Optional.of(false)))
                            .doOnError(error -> error instanceof OAuthException oauth && oauth.restartRequired().equals(Optional.of(false)),
                                    error -> sessions.putIfAbsent(state, session))
                            .flatMap(token -> mint(start, client, token)));
        });
    }

    /**
     * The callback's work: completes the flow, and keeps its outcome for whoever polls {@code await}. Never fails.
     * Only flows Tether started leave an outcome: a state it never issued (or no longer holds) fills no memory.
     */
    public Mono<Outcome> callback(String state, Optional<String> code, Optional<String> error, Optional<String> errorDescription) {
        if (error.isPresent() || code.isEmpty()) {
            boolean known = sessions.remove(state) != null;
            String why = error.map(e -> "the authorization server answered " + e + errorDescription.map(d -> ": " + d).orElse(""))
                    .orElse("the authorization server sent no code");
            Outcome outcome = new Outcome(state, Optional.empty(), known ? "Could not complete authentication"
                    : "OAuth session expired or not found", Optional.of(why));
            return Mono.just(known ? keep(outcome) : outcome);
        }
        return complete(state, code.get())
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

    /** Drops the flow with this state; answers true whether or not it was in flight, as Executor does. */
    public boolean cancel(String state) {
        sessions.remove(state);
        return true;
    }

    private static Outcome failed(String state, Throwable failure) {
        if (failure instanceof OAuthSessionNotFoundException) {
            return new Outcome(state, Optional.empty(), "OAuth session expired or not found", Optional.of("State: " + state));
        }
        if (failure instanceof OAuthException oauth) {
            return new Outcome(state, Optional.empty(), "Could not complete authentication", Optional.of(oauth.getMessage()));
        }
        log.error("OAuth callback failed for an unexpected reason", failure);
        return new Outcome(state, Optional.empty(), "Authentication failed", Optional.empty());
    }

    /** Stores the tokens and makes the connection, or replaces the tokens of the one that is there (re-authorization). */
    private Mono<Connection> mint(Start target, OAuthClient client, TokenResponse token) {
        ConnectionKey key = new ConnectionKey(target.owner(), target.integration(), target.name());
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
                    log.info("OAuth connection {} authorized through client {}/{}", key, target.clientOwner().wire(), client.slug());
                })
                // A session of the connection still holds the old tokens: ended, the next one starts with these; the
                // catalog is synced with what they may now list.
                .flatMap(connection -> mcpSessions.retire(key).then(catalogs.changed(key.integration())).thenReturn(connection));
    }

    private static void checkAuthorizationUrl(String authorizationUrl, String tokenUrl) {
        URI uri = Endpoints.check(authorizationUrl, "authorizationUrl");
        String path = Endpoints.path(uri).toLowerCase(Locale.ROOT);
        if (path.contains("/.well-known/")) {
            throw new IllegalArgumentException("`authorizationUrl` must be the authorization endpoint, not a .well-known metadata URL");
        }
        if (Endpoints.origin(uri).equals(Endpoints.origin(Endpoints.parse(tokenUrl, "tokenUrl")))
                && Endpoints.path(uri).equals(Endpoints.path(Endpoints.parse(tokenUrl, "tokenUrl")))) {
            throw new IllegalArgumentException("`authorizationUrl` must not equal `tokenUrl`");
        }
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
