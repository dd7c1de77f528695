package dev.tether.oauth;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

import dev.tether.store.OAuthClient;

/**
 * The three grants Tether asks a token endpoint for: an authorization code (with its PKCE verifier), a refresh
 * token, client credentials. The RFC 8707 {@code resource} of the client goes with each. A confidential client
 * authenticates with HTTP Basic, or in the form when it was registered dynamically for {@code client_secret_post};
 * a public client sends only its {@code client_id}.
 */
@Component
final class TokenEndpoint {

    private final OAuthHttp http;

    TokenEndpoint(OAuthHttp http) {
        this.http = http;
    }

    Mono<TokenResponse> authorizationCode(OAuthClient client, String code, String redirectUri, String verifier) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "authorization_code");
        form.put("code", code);
        form.put("redirect_uri", redirectUri);
        form.put("code_verifier", verifier);
        return request(client, form);
    }

    Mono<TokenResponse> refresh(OAuthClient client, String refreshToken) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "refresh_token");
        form.put("refresh_token", refreshToken);
        return request(client, form);
    }

    Mono<TokenResponse> clientCredentials(OAuthClient client, List<String> scopes) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "client_credentials");
        if (!scopes.isEmpty()) {
            form.put("scope", String.join(" ", scopes));
        }
        return request(client, form);
    }

    private Mono<TokenResponse> request(OAuthClient client, Map<String, String> grant) {
        return Mono.defer(() -> {
            URI uri = Endpoints.check(client.tokenUrl(), "tokenUrl");
            Map<String, String> form = new LinkedHashMap<>(grant);
            client.resource().ifPresent(resource -> form.put("resource", resource));
            Optional<String> basic = Optional.empty();
            if (client.clientSecret().isPresent() && !client.dynamic()) {
                basic = Optional.of("Basic " + Base64.getEncoder().encodeToString(
                        (formEncode(client.clientId()) + ":" + formEncode(client.clientSecret().get())).getBytes(StandardCharsets.UTF_8)));
            }
            else {
                form.put("client_id", client.clientId());
                client.clientSecret().ifPresent(secret -> form.put("client_secret", secret));
            }
            return http.postForm(uri, form, basic).map(reply -> token(uri, reply));
        });
    }

    private TokenResponse token(URI uri, OAuthHttp.Reply reply) {
        JsonNode body = http.json(uri, reply);
        if (!reply.ok()) {
            String error = OAuthDiscovery.text(body.path("error")).orElseThrow(() ->
                    new OAuthHttpException(uri, "answered HTTP " + reply.status() + " without an OAuth error"));
            String description = OAuthDiscovery.text(body.path("error_description")).map(d -> ": " + d).orElse("");
            throw new TokenRefusedException(error, "the token endpoint refused: " + error + description);
        }
        String access = OAuthDiscovery.text(body.path("access_token"))
                .orElseThrow(() -> new OAuthHttpException(uri, "answered without an access_token"));
        Optional<String> type = OAuthDiscovery.text(body.path("token_type"));
        if (type.isPresent() && !type.get().equalsIgnoreCase("bearer")) {
            throw new OAuthHttpException(uri, "answered with token_type " + type.get() + ", not Bearer");
        }
        JsonNode expires = body.path("expires_in");
        Optional<Long> expiresIn = expires.isNumber() ? Optional.of(expires.asLong())
                : expires.isString() && expires.asString().matches("\\d{1,12}") ? Optional.of(Long.parseLong(expires.asString()))
                : Optional.empty();
        return new TokenResponse(access, OAuthDiscovery.text(body.path("refresh_token")), expiresIn.filter(s -> s >= 0),
                OAuthDiscovery.text(body.path("scope")));
    }

    /** RFC 6749 §2.3.1: id and secret are form-encoded before they go into Basic. */
    private static String formEncode(String value) {
        return java.net.URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
