package dev.tether.oauth;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

import dev.tether.identity.Principals;
import dev.tether.store.OAuthClient;
import dev.tether.store.OAuthClientStore;
import dev.tether.store.Owner;

/**
 * Executor's OAuth clients, the apps a flow ({@link OAuthFlows}) connects through: found by probing a server's
 * metadata, then saved as given by hand or registered with the authorization server (RFC 7591). Endpoints Tether
 * would send secrets to are checked before anything is saved.
 */
@Component
public final class OAuthClients {

    /** Body of {@code POST /api/oauth/clients}. */
    public record NewClient(Owner owner, String slug, String authorizationUrl, String tokenUrl, String grant, String clientId,
            String clientSecret, Optional<String> resource) {
    }

    /** Body of {@code POST /api/oauth/clients/register-dynamic}. */
    public record DynamicRegistration(Owner owner, String slug, String registrationEndpoint, String authorizationUrl,
            String tokenUrl, Optional<String> resource, List<String> scopes, Optional<List<String>> tokenEndpointAuthMethodsSupported,
            Optional<String> clientName, Optional<String> originIntegration) {
    }

    private final OAuthClientStore clients;
    private final OAuthDiscovery discovery;
    private final OAuthHttp http;
    private final ClientMetadataDocument document;

    OAuthClients(OAuthClientStore clients, OAuthDiscovery discovery, OAuthHttp http, ClientMetadataDocument document) {
        this.clients = clients;
        this.discovery = discovery;
        this.http = http;
        this.document = document;
    }

    /**
     * What a server's metadata says a client for it needs: its endpoints, scopes and where to register. Where the
     * server takes a client metadata document and Tether publishes one, that is where: the registration endpoint
     * answered is the document's URL, which {@link #registerDynamic} then takes as the client id without asking the
     * server anything (so Executor's UI, which registers wherever the probe says, uses the document unchanged).
     */
    public Mono<ProbeResult> probe(String url) {
        return discovery.probe(url).map(found -> found.clientIdMetadataDocumentSupported() && document.url().isPresent()
                ? new ProbeResult(found.authorizationUrl(), found.tokenUrl(), found.resource(), found.scopesSupported(), document.url(),
                        found.tokenEndpointAuthMethodsSupported(), true)
                : found);
    }

    public Flux<OAuthClient> clients() {
        return clients.clients();
    }

    /**
     * Saves a client given by hand, the organisation's or the caller's own; an endpoint Tether would not send secrets to
     * is an {@link IllegalArgumentException}.
     */
    public Mono<String> createClient(NewClient input) {
        return Principals.current().map(caller -> {
                    String grant = input.grant();
                    if (!grant.equals(OAuthClient.AUTHORIZATION_CODE) && !grant.equals(OAuthClient.CLIENT_CREDENTIALS)) {
                        throw new IllegalArgumentException("`grant` must be authorization_code or client_credentials, was " + grant);
                    }
                    Endpoints.check(input.tokenUrl(), "tokenUrl");
                    input.resource().ifPresent(resource -> Endpoints.check(resource, "resource"));
                    if (grant.equals(OAuthClient.AUTHORIZATION_CODE)) {
                        checkAuthorizationUrl(input.authorizationUrl(), input.tokenUrl());
                    }
                    return new OAuthClient(input.owner(), input.owner().subjectFor(caller), input.slug(), grant, input.authorizationUrl(), input.tokenUrl(),
                            input.clientId(), Optional.of(input.clientSecret()), input.resource(), false, Optional.empty());
                })
                .flatMap(clients::saveClient)
                .map(OAuthClient::slug);
    }

    /** Removes the organisation's client of this slug, or the caller's own. */
    public Mono<Boolean> removeClient(Owner owner, String slug) {
        return Principals.current().flatMap(caller -> clients.removeClient(owner, owner.subjectFor(caller), slug));
    }

    /**
     * Registers Tether as a client of the authorization server (RFC 7591): a public PKCE client ({@code none}) unless
     * the server allows only confidential ones, then {@code client_secret_post}. Given Tether's own client metadata
     * document as the registration endpoint (as {@link #probe} answers for a server that takes one), nothing is sent:
     * the client goes by the document's URL, which the server fetches when a flow starts.
     */
    public Mono<String> registerDynamic(DynamicRegistration input, String redirectUri) {
        return Principals.current().flatMap(caller -> {
                    Endpoints.check(input.tokenUrl(), "tokenUrl");
                    checkAuthorizationUrl(input.authorizationUrl(), input.tokenUrl());
                    input.resource().ifPresent(resource -> Endpoints.check(resource, "resource"));
                    if (document.url().filter(input.registrationEndpoint().strip()::equals).isPresent()) {
                        return Mono.just(new OAuthClient(input.owner(), input.owner().subjectFor(caller), input.slug(),
                                OAuthClient.AUTHORIZATION_CODE, input.authorizationUrl(),
                                input.tokenUrl(), document.url().orElseThrow(), Optional.empty(), input.resource(), true,
                                input.originIntegration()));
                    }
                    URI endpoint = Endpoints.check(input.registrationEndpoint(), "registrationEndpoint");
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
                        return new OAuthClient(input.owner(), input.owner().subjectFor(caller), input.slug(),
                                OAuthClient.AUTHORIZATION_CODE, input.authorizationUrl(),
                                input.tokenUrl(), clientId, OAuthDiscovery.text(body.path("client_secret")), input.resource(), true,
                                input.originIntegration());
                    });
                })
                .onErrorMap(error -> error instanceof IllegalArgumentException || error instanceof OAuthHttpException,
                        error -> new OAuthException(OAuthException.REGISTER_DYNAMIC, "Dynamic Client Registration failed: " + error.getMessage()))
                .flatMap(clients::saveClient)
                .map(OAuthClient::slug);
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
}
