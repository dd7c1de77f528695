package dev.tether.oauth;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.springframework.stereotype.Component;

import dev.tether.store.OAuthClient;

/**
 * Tether as an OAuth client that needs no registration (draft-ietf-oauth-client-id-metadata-document, MCP's
 * SEP-991): its metadata lives at {@code <tether.oauth.public-base-url>/api/oauth/client-metadata.json}, and that URL
 * is its {@code client_id} at every authorization server that advertises {@code client_id_metadata_document_supported}.
 * The server fetches the document when a flow starts and learns the redirect URIs from it. Without a public base URL
 * there is no document, and clients are registered dynamically (RFC 7591) as before.
 *
 * <p>A public PKCE client ({@code none}): one document serves every server, so it holds no secret and no scope; a
 * flow asks for its scopes in the authorization request.
 */
@Component
public final class ClientMetadataDocument {

    /** Where the document is served, under the public base URL. */
    public static final String PATH = "/api/oauth/client-metadata.json";
    static final String CALLBACK = "/api/oauth/callback";

    private final OAuthProperties properties;

    ClientMetadataDocument(OAuthProperties properties) {
        this.properties = properties;
    }

    /** The document's URL, which is Tether's {@code client_id} where it is taken; empty without a public base URL. */
    public Optional<String> url() {
        return properties.publicBase().map(base -> base + PATH);
    }

    /** The document, or empty without a public base URL. */
    public Optional<Map<String, Object>> document() {
        return url().map(url -> {
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("client_id", url);
            document.put("client_name", "Tether");
            document.put("client_uri", properties.publicBase().orElseThrow());
            document.put("redirect_uris", redirectUris());
            document.put("grant_types", List.of("authorization_code", "refresh_token"));
            document.put("response_types", List.of("code"));
            document.put("token_endpoint_auth_method", "none");
            return document;
        });
    }

    /**
     * Where a flow through the document may send the browser back to: the callback on the web base URL (where users
     * reach Tether) when one is set, and on the public base URL. A server takes no other.
     */
    List<String> redirectUris() {
        Set<String> uris = new LinkedHashSet<>();
        properties.webBase().ifPresent(web -> uris.add(web + CALLBACK));
        properties.publicBase().ifPresent(base -> uris.add(base + CALLBACK));
        return List.copyOf(uris);
    }

    /** Whether the client goes by this document (its id is the document's URL). */
    boolean describes(OAuthClient client) {
        return url().filter(client.clientId()::equals).isPresent();
    }

    /**
     * The redirect URI of a flow through the document: the one asked for when the document lists it, else the first
     * it lists, since the server refuses any other. Only for a client the document {@link #describes}.
     */
    String redirectUri(String asked) {
        List<String> listed = redirectUris();
        return listed.contains(asked) ? asked : listed.get(0);
    }
}
