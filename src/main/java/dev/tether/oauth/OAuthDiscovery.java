package dev.tether.oauth;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

import dev.tether.mcp.RemoteServer;

/**
 * Finds how a protected MCP server is authorized. The protected-resource metadata (RFC 9728) comes from the
 * {@code resource_metadata} of the server's {@code WWW-Authenticate} challenge, else from the well-known path
 * (path-suffixed first, then at the root); its first authorization server (else the server's own URL) is then
 * asked for RFC 8414 metadata, with the OpenID configuration as the fallback; that metadata must name the issuer it
 * was fetched for (RFC 8414 §3.3).
 */
@Component
final class OAuthDiscovery {

    private static final Logger log = LoggerFactory.getLogger(OAuthDiscovery.class);

    private static final Pattern RESOURCE_METADATA = Pattern.compile("resource_metadata\\s*=\\s*\"([^\"]+)\"", Pattern.CASE_INSENSITIVE);
    /** What a connection's first request says (RFC 9728 metadata requests carry it, as the MCP SDKs send it). */
    private static final Map<String, String> MCP_HEADERS = Map.of("MCP-Protocol-Version", RemoteServer.OPENING_VERSION);

    private final OAuthHttp http;

    OAuthDiscovery(OAuthHttp http) {
        this.http = http;
    }

    /** An authorization server's RFC 8414 metadata, its issuer checked against the identifier it was fetched for. */
    record AuthorizationServer(String issuer, JsonNode metadata) {

        String authorizationEndpoint() {
            return metadata.path("authorization_endpoint").asString();
        }

        /** RFC 9207: it sends {@code iss} with every authorization response (only a literal {@code true} counts). */
        boolean issParameterSupported() {
            return flag("authorization_response_iss_parameter_supported");
        }

        /** It takes a client metadata document's URL as {@code client_id} (draft-ietf-oauth-client-id-metadata-document). */
        boolean clientIdMetadataDocumentSupported() {
            return flag("client_id_metadata_document_supported");
        }

        private boolean flag(String name) {
            JsonNode value = metadata.path(name);
            return value.isBoolean() && value.asBoolean();
        }
    }

    /** What discovery found for a protected resource: its RFC 9728 metadata, if any, and its authorization server. */
    record Discovered(Optional<JsonNode> resource, AuthorizationServer server) {
    }

    Mono<ProbeResult> probe(String url) {
        return discover(url)
                .map(found -> result(found.server(), found.resource()))
                .onErrorMap(IssuerMismatchException.class, ex -> new OAuthException(OAuthException.PROBE, ex.getMessage()));
    }

    /**
     * The authorization server a flow through this client goes to, so that its response can be checked against it:
     * the one the client's resource names, when its authorization endpoint is the client's. Empty when the client has
     * no resource, or discovery finds no such server (a client made by hand for a server without metadata); metadata
     * whose issuer is not the one it was fetched for is an {@link IssuerMismatchException}.
     */
    Mono<AuthorizationServer> serverOf(dev.tether.store.OAuthClient client) {
        return Mono.justOrEmpty(client.resource())
                .flatMap(resource -> discover(resource)
                        .map(Discovered::server)
                        .filter(server -> server.authorizationEndpoint().equals(client.authorizationUrl()))
                        .onErrorResume(failure -> failure instanceof OAuthException || failure instanceof OAuthHttpException, failure -> {
                            log.info("OAuth client {}/{}: no authorization server found for {} ({}); its responses' iss cannot be checked",
                                    client.owner().wire(), client.slug(), resource, failure.getMessage());
                            return Mono.empty();
                        }));
    }

    private Mono<Discovered> discover(String url) {
        return Mono.fromCallable(() -> Endpoints.parse(url, "url"))
                .onErrorMap(IllegalArgumentException.class, ex -> new OAuthException(OAuthException.PROBE, ex.getMessage()))
                .flatMap(resourceUrl -> protectedResource(resourceUrl)
                        .map(Optional::of).defaultIfEmpty(Optional.empty())
                        .flatMap(metadata -> {
                            String issuer = metadata.flatMap(m -> first(m.path("authorization_servers"))).orElse(url);
                            return authorizationServer(issuer)
                                    .switchIfEmpty(Mono.error(() -> new OAuthException(OAuthException.PROBE,
                                            "No OAuth authorization-server metadata found at " + issuer)))
                                    .map(as -> new Discovered(metadata, as));
                        }));
    }

    private static ProbeResult result(AuthorizationServer server, Optional<JsonNode> resource) {
        JsonNode as = server.metadata();
        return new ProbeResult(as.path("authorization_endpoint").asString(), as.path("token_endpoint").asString(),
                resource.flatMap(r -> text(r.path("resource"))), strings(as.path("scopes_supported")),
                text(as.path("registration_endpoint")), strings(as.path("token_endpoint_auth_methods_supported")),
                server.clientIdMetadataDocumentSupported());
    }

    /** RFC 9728 metadata: from the challenge's {@code resource_metadata}, else the well-known paths. Empty when none. */
    private Mono<JsonNode> protectedResource(URI resource) {
        String origin = Endpoints.origin(resource);
        String path = Endpoints.path(resource);
        Mono<List<URI>> candidates = http.challenge(resource)
                .map(reply -> challengeMetadata(reply.headers()))
                .onErrorResume(OAuthHttpException.class, ex -> Mono.just(Optional.empty()))
                .map(fromChallenge -> {
                    Set<URI> urls = new LinkedHashSet<>();
                    fromChallenge.ifPresent(urls::add);
                    if (!path.isEmpty()) {
                        urls.add(URI.create(origin + "/.well-known/oauth-protected-resource" + path));
                    }
                    urls.add(URI.create(origin + "/.well-known/oauth-protected-resource"));
                    return new ArrayList<>(urls);
                });
        return candidates.flatMap(urls -> firstMetadata(urls, MCP_HEADERS, node -> node.has("authorization_servers")));
    }

    private static Optional<URI> challengeMetadata(HttpHeaders headers) {
        for (String challenge : headers.getOrEmpty(HttpHeaders.WWW_AUTHENTICATE)) {
            Matcher matcher = RESOURCE_METADATA.matcher(challenge);
            if (matcher.find()) {
                try {
                    return Optional.of(Endpoints.parse(matcher.group(1), "resource_metadata"));
                }
                catch (IllegalArgumentException ex) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    /**
     * RFC 8414 metadata of an issuer, with the OpenID configuration (both placements) as the fallback. The first
     * document found must name this issuer, or it is an {@link IssuerMismatchException}.
     */
    private Mono<AuthorizationServer> authorizationServer(String issuer) {
        URI uri;
        try {
            uri = Endpoints.parse(issuer, "authorization_servers[0]");
        }
        catch (IllegalArgumentException ex) {
            return Mono.error(new OAuthException(OAuthException.PROBE, ex.getMessage()));
        }
        String origin = Endpoints.origin(uri);
        String path = Endpoints.path(uri);
        Set<URI> urls = new LinkedHashSet<>();
        urls.add(URI.create(origin + "/.well-known/oauth-authorization-server" + path));
        urls.add(URI.create(origin + "/.well-known/openid-configuration" + path));
        if (!path.isEmpty()) {
            urls.add(URI.create(origin + path + "/.well-known/openid-configuration"));
        }
        return Flux.fromIterable(urls)
                .concatMap(url -> metadata(url, Map.of(),
                        node -> text(node.path("authorization_endpoint")).isPresent() && text(node.path("token_endpoint")).isPresent())
                        .map(node -> {
                            IssuerMismatchException.checkMetadata(issuer, text(node.path("issuer")), url);
                            return new AuthorizationServer(node.path("issuer").asString(), node);
                        }), 1)
                .next();
    }

    /** The first URL that answers 2xx with a JSON object that {@code fits}; empty when none does. */
    private Mono<JsonNode> firstMetadata(List<URI> urls, Map<String, String> headers, Predicate<JsonNode> fits) {
        return Flux.fromIterable(urls).concatMap(url -> metadata(url, headers, fits), 1).next();
    }

    /** The JSON object at this URL, when it answers 2xx with one that {@code fits}; empty otherwise. */
    private Mono<JsonNode> metadata(URI url, Map<String, String> headers, Predicate<JsonNode> fits) {
        return http.get(url, headers)
                .filter(OAuthHttp.Reply::ok)
                .map(reply -> http.json(url, reply))
                .filter(fits)
                .onErrorResume(OAuthHttpException.class, ex -> Mono.empty());
    }

    private static Optional<String> first(JsonNode array) {
        return array.isArray() && !array.isEmpty() ? text(array.get(0)) : Optional.empty();
    }

    static Optional<String> text(JsonNode node) {
        return node != null && node.isString() && !node.asString().isBlank() ? Optional.of(node.asString()) : Optional.empty();
    }

    static Optional<List<String>> strings(JsonNode node) {
        if (node == null || !node.isArray()) {
            return Optional.empty();
        }
        List<String> values = new ArrayList<>();
        node.forEach(value -> text(value).ifPresent(values::add));
        return Optional.of(List.copyOf(values));
    }
}
