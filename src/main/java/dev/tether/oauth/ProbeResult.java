package dev.tether.oauth;

import java.util.List;
import java.util.Optional;

/**
 * What discovery found for a protected resource, as {@code POST /api/oauth/probe} answers it.
 *
 * @param authorizationUrl                  the authorization endpoint
 * @param tokenUrl                          the token endpoint
 * @param resource                          the resource as its RFC 9728 metadata names it
 * @param scopesSupported                   the authorization server's scopes
 * @param registrationEndpoint              where clients register dynamically (RFC 7591)
 * @param tokenEndpointAuthMethodsSupported how clients may authenticate at the token endpoint
 * @param clientIdMetadataDocumentSupported whether the authorization server takes a client metadata document's URL
 *                                          as {@code client_id}
 */
public record ProbeResult(String authorizationUrl, String tokenUrl, Optional<String> resource,
        Optional<List<String>> scopesSupported, Optional<String> registrationEndpoint,
        Optional<List<String>> tokenEndpointAuthMethodsSupported, boolean clientIdMetadataDocumentSupported) {
}
