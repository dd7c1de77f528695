package dev.tether.store;

import java.util.Objects;
import java.util.Optional;

/**
 * An OAuth client (an "app" in Executor's UI) that connections are authorized through. Its secret is sealed in
 * the store and never part of what the API returns.
 *
 * @param owner             who owns it
 * @param subject           the user whose it is; {@code ""} for the organisation's
 * @param slug              its name, unique per owner
 * @param grant             {@code authorization_code} or {@code client_credentials}
 * @param authorizationUrl  the authorization endpoint (unused for client credentials)
 * @param tokenUrl          the token endpoint
 * @param clientId          the client id the authorization server knows it by
 * @param clientSecret      its secret; empty for a public (PKCE) client
 * @param resource          the RFC 8707 resource indicator sent with every authorization and token request
 * @param dynamic           whether it was made by dynamic client registration (RFC 7591)
 * @param originIntegration for a dynamic client, the integration it was registered for
 */
public record OAuthClient(Owner owner, String subject, String slug, String grant, String authorizationUrl, String tokenUrl,
        String clientId, Optional<String> clientSecret, Optional<String> resource, boolean dynamic,
        Optional<String> originIntegration) {

    public static final String AUTHORIZATION_CODE = "authorization_code";
    public static final String CLIENT_CREDENTIALS = "client_credentials";

    public OAuthClient {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(slug, "slug");
        if (owner == Owner.ORG != subject.isEmpty()) {
            throw new IllegalArgumentException("an org client belongs to no subject, a user's to one");
        }
        Objects.requireNonNull(grant, "grant");
        Objects.requireNonNull(authorizationUrl, "authorizationUrl");
        Objects.requireNonNull(tokenUrl, "tokenUrl");
        Objects.requireNonNull(clientId, "clientId");
        clientSecret = clientSecret == null ? Optional.empty() : clientSecret.filter(secret -> !secret.isEmpty());
        resource = resource == null ? Optional.empty() : resource.filter(r -> !r.isBlank());
        originIntegration = originIntegration == null ? Optional.empty() : originIntegration;
    }

    /** No secret in a log line. */
    @Override
    public String toString() {
        return "OAuthClient[" + OwnerNames.of(owner, subject) + "/" + slug + ", " + grant + ", token " + tokenUrl + ", client id " + clientId
                + (clientSecret.isPresent() ? ", secret ***" : ", public") + "]";
    }
}
