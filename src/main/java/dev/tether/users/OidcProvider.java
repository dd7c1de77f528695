package dev.tether.users;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.netty.channel.ChannelOption;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.security.oauth2.core.DelegatingOAuth2TokenValidator;
import org.springframework.security.oauth2.core.OAuth2Error;
import org.springframework.security.oauth2.core.OAuth2TokenValidatorResult;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtClaimNames;
import org.springframework.security.oauth2.jwt.JwtClaimValidator;
import org.springframework.security.oauth2.jwt.JwtValidators;
import org.springframework.security.oauth2.jwt.NimbusReactiveJwtDecoder;
import org.springframework.security.oauth2.jwt.ReactiveJwtDecoder;
import org.springframework.stereotype.Component;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The OpenID Connect provider of {@code oidc} mode: its metadata ({@code /.well-known/openid-configuration}, read at first
 * use and kept; a failed read is tried again by the next asker), the decoders of its JWTs (Spring Security's
 * {@link NimbusReactiveJwtDecoder}: signature by the provider's JWKS, fetched and cached, expiry, issuer, and audience),
 * and its token endpoint (the web UI's code exchange, the revalidation's refreshes). Every request to the provider is
 * bounded in time; it never follows redirects.
 */
@Component
public final class OidcProvider implements DisposableBean {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** What the provider publishes that Tether uses. */
    record Metadata(String issuer, URI authorization, URI token, URI jwks, Optional<URI> endSession) {
    }

    /** What a token endpoint answered: the tokens Tether reads, never logged. */
    record Tokens(String accessToken, Optional<String> idToken, Optional<String> refreshToken) {

        @Override
        public String toString() {
            return "Tokens[***]";
        }
    }

    /** The provider refused (an OAuth error: {@code invalid_grant} for a disabled user or a spent code). */
    static final class RefusedException extends RuntimeException {

        private final String error;

        RefusedException(String error, @Nullable String description) {
            super("the provider refused: " + error + (description == null ? "" : " (" + description + ")"));
            this.error = error;
        }

        String error() {
            return error;
        }
    }

    /** The provider could not be asked (down, unreachable, or answering garbage): nothing is known of the user. */
    static final class UnavailableException extends RuntimeException {

        UnavailableException(String message, @Nullable Throwable cause) {
            super(message, cause);
        }
    }

    private final IdentityProperties.Oidc settings;
    private final JsonMapper json;
    private final ConnectionProvider connections;
    private final WebClient client;
    private final Mono<Metadata> metadata;
    private final Mono<ReactiveJwtDecoder> accessTokens;
    private final Mono<ReactiveJwtDecoder> idTokens;

    OidcProvider(IdentityProperties properties, JsonMapper json) {
        this.settings = properties.oidc();
        this.json = json;
        this.connections = ConnectionProvider.builder("tether-oidc").maxConnections(32).pendingAcquireTimeout(TIMEOUT).build();
        this.client = WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(HttpClient.create(connections)
                        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) TIMEOUT.toMillis())
                        .responseTimeout(TIMEOUT)
                        .followRedirect(false)))
                .build();
        // Kept once read; a failed read is not kept, so the next asker tries again.
        this.metadata = Mono.defer(this::discover).cache(ok -> Duration.ofMillis(Long.MAX_VALUE), failed -> Duration.ZERO, () -> Duration.ZERO);
        this.accessTokens = metadata.map(this::accessTokenDecoder).cache(ok -> Duration.ofMillis(Long.MAX_VALUE), failed -> Duration.ZERO,
                () -> Duration.ZERO);
        this.idTokens = metadata.map(this::idTokenDecoder).cache(ok -> Duration.ofMillis(Long.MAX_VALUE), failed -> Duration.ZERO,
                () -> Duration.ZERO);
    }

    Mono<Metadata> metadata() {
        return metadata;
    }

    /** The issuer the configuration names, for messages and the protected resource's metadata. */
    String issuer() {
        return String.valueOf(settings.issuer());
    }

    private Mono<Metadata> discover() {
        URI issuer = settings.issuer();
        if (issuer == null) {
            return Mono.error(new UnavailableException("tether.identity.oidc.issuer is not set", null));
        }
        String base = issuer.toString().endsWith("/") ? issuer.toString().substring(0, issuer.toString().length() - 1) : issuer.toString();
        URI well = URI.create(base + "/.well-known/openid-configuration");
        return client.get().uri(well).accept(MediaType.APPLICATION_JSON)
                .exchangeToMono(answer -> answer.bodyToMono(String.class).defaultIfEmpty("").map(body -> {
                    if (!answer.statusCode().is2xxSuccessful()) {
                        throw new UnavailableException(well + " answered " + answer.statusCode().value(), null);
                    }
                    JsonNode doc = json.readTree(body);
                    String published = doc.path("issuer").asString("");
                    if (!published.equals(issuer.toString()) && !published.equals(base)) {
                        throw new UnavailableException(well + " names the issuer " + published + ", not " + issuer
                                + " (tether.identity.oidc.issuer must be the provider's issuer exactly)", null);
                    }
                    return new Metadata(published, endpoint(doc, "authorization_endpoint", well), endpoint(doc, "token_endpoint", well),
                            endpoint(doc, "jwks_uri", well), Optional.of(doc.path("end_session_endpoint").asString(""))
                                    .filter(text -> !text.isEmpty()).map(URI::create));
                }))
                .timeout(TIMEOUT)
                .onErrorMap(failed -> !(failed instanceof UnavailableException),
                        failed -> new UnavailableException("cannot read the OIDC provider's metadata at " + well + ": " + failed, failed));
    }

    private static URI endpoint(JsonNode doc, String field, URI where) {
        String value = doc.path(field).asString("");
        if (value.isEmpty()) {
            throw new UnavailableException(where + " names no " + field, null);
        }
        return URI.create(value);
    }

    /** Access tokens (agents, the CLI): signed by the provider, for this issuer, unexpired, carrying the configured audience. */
    private ReactiveJwtDecoder accessTokenDecoder(Metadata published) {
        NimbusReactiveJwtDecoder decoder = NimbusReactiveJwtDecoder.withJwkSetUri(published.jwks().toString()).webClient(client).build();
        String audience = settings.audience();
        decoder.setJwtValidator(new DelegatingOAuth2TokenValidator<>(JwtValidators.createDefaultWithIssuer(published.issuer()),
                new JwtClaimValidator<List<String>>(JwtClaimNames.AUD, aud -> aud != null && aud.contains(audience)),
                OidcProvider::notAnIdToken));
        return decoder;
    }

    /**
     * An ID token names the client as its audience too, but it says who signed in to that client, not that the bearer may
     * call an API: one presented as a bearer token is refused (Keycloak's {@code typ: ID}, or an ID token's {@code at_hash}).
     */
    private static OAuth2TokenValidatorResult notAnIdToken(Jwt jwt) {
        boolean id = "ID".equalsIgnoreCase(jwt.getClaimAsString("typ")) || jwt.hasClaim("at_hash");
        return id ? OAuth2TokenValidatorResult.failure(new OAuth2Error("invalid_token", "an ID token is not an access token", null))
                : OAuth2TokenValidatorResult.success();
    }

    /** ID tokens (the web UI's sign-in): as access tokens, for Tether's client. */
    private ReactiveJwtDecoder idTokenDecoder(Metadata published) {
        NimbusReactiveJwtDecoder decoder = NimbusReactiveJwtDecoder.withJwkSetUri(published.jwks().toString()).webClient(client).build();
        String clientId = settings.clientId();
        decoder.setJwtValidator(new DelegatingOAuth2TokenValidator<>(JwtValidators.createDefaultWithIssuer(published.issuer()),
                new JwtClaimValidator<List<String>>(JwtClaimNames.AUD, aud -> aud != null && aud.contains(clientId))));
        return decoder;
    }

    /** An agent's JWT, checked; an error ({@code JwtException}) when it does not pass. */
    Mono<Jwt> accessToken(String token) {
        return accessTokens.flatMap(decoder -> decoder.decode(token));
    }

    /** The ID token of a sign-in, checked. */
    Mono<Jwt> idToken(String token) {
        return idTokens.flatMap(decoder -> decoder.decode(token));
    }

    /** Exchanges a sign-in's code (with its PKCE verifier) for tokens. */
    Mono<Tokens> exchange(String code, String redirectUri, String verifier) {
        MultiValueMap<String, String> form = form("authorization_code");
        form.add("code", code);
        form.add("redirect_uri", redirectUri);
        form.add("code_verifier", verifier);
        return tokenRequest(form);
    }

    /**
     * Renews a signed-in user's tokens: the provider's answer to whether the user may still come in. A disabled user (or
     * one signed out everywhere) is {@link RefusedException} {@code invalid_grant}.
     */
    Mono<Tokens> refresh(String refreshToken) {
        MultiValueMap<String, String> form = form("refresh_token");
        form.add("refresh_token", refreshToken);
        return tokenRequest(form);
    }

    private MultiValueMap<String, String> form(String grant) {
        MultiValueMap<String, String> form = new LinkedMultiValueMap<>();
        form.add("grant_type", grant);
        form.add("client_id", settings.clientId());
        if (settings.clientSecret() != null) {
            form.add("client_secret", settings.clientSecret());
        }
        return form;
    }

    private Mono<Tokens> tokenRequest(MultiValueMap<String, String> form) {
        return metadata.flatMap(published -> client.post().uri(published.token())
                .contentType(MediaType.APPLICATION_FORM_URLENCODED).accept(MediaType.APPLICATION_JSON)
                .body(BodyInserters.fromFormData(form))
                .exchangeToMono(answer -> answer.bodyToMono(String.class).defaultIfEmpty("").map(body -> tokens(answer.statusCode(), body)))
                .timeout(TIMEOUT)
                .onErrorMap(failed -> failed instanceof WebClientRequestException || failed instanceof java.util.concurrent.TimeoutException,
                        failed -> new UnavailableException("the provider's token endpoint did not answer: " + failed.getClass().getSimpleName(),
                                failed)));
    }

    /** The answer of the token endpoint; its error (OAuth's {@code error} and description) when it refused, never the request. */
    private Tokens tokens(HttpStatusCode status, String body) {
        JsonNode answer;
        try {
            answer = json.readTree(body);
        }
        catch (RuntimeException notJson) {
            throw new UnavailableException("the provider's token endpoint answered " + status.value() + " with no JSON", null);
        }
        if (!status.is2xxSuccessful()) {
            String error = answer.path("error").asString("");
            if (error.isEmpty()) {
                throw new UnavailableException("the provider's token endpoint answered " + status.value(), null);
            }
            String description = answer.path("error_description").asString("");
            throw new RefusedException(error, description.isEmpty() ? null : description);
        }
        String access = answer.path("access_token").asString("");
        if (access.isEmpty()) {
            throw new UnavailableException("the provider's token endpoint answered no access_token", null);
        }
        return new Tokens(access, text(answer, "id_token"), text(answer, "refresh_token"));
    }

    private static Optional<String> text(JsonNode answer, String field) {
        return Optional.of(answer.path(field).asString("")).filter(value -> !value.isEmpty());
    }

    /** The value at a dotted path of a token's claims ({@code realm_access.roles}); empty when absent. */
    static List<String> claimList(Map<String, Object> claims, String path) {
        Object value = claims;
        for (String part : path.split("\\.")) {
            if (!(value instanceof Map<?, ?> map)) {
                return List.of();
            }
            value = map.get(part);
        }
        if (value instanceof List<?> list) {
            return list.stream().filter(String.class::isInstance).map(String.class::cast).toList();
        }
        return value instanceof String single ? List.of(single) : List.of();
    }

    @Override
    public void destroy() {
        connections.dispose();
    }
}
