package dev.tether.store;

import java.util.Objects;
import java.util.Optional;

/**
 * What a connection made by an OAuth flow carries besides its tokens (which are credentials, kept sealed apart):
 * the fields Executor shows on such a connection.
 *
 * @param client      the slug of the OAuth client it was authorized through
 * @param clientOwner who owns that client
 * @param scope       the scope the authorization server granted, or the one asked for when it named none
 * @param expiresAt   epoch milliseconds when the access token expires; empty when the server gave no lifetime
 */
public record OAuthGrant(String client, Owner clientOwner, Optional<String> scope, Optional<Long> expiresAt) {

    /** Credential names of the tokens; no header can be named so, so they never clash with a user's headers. */
    public static final String ACCESS_TOKEN = "oauth:access_token";
    public static final String REFRESH_TOKEN = "oauth:refresh_token";

    /** Whether a credential is one of the tokens, which a remote server gets as {@code Authorization}, not as a header. */
    public static boolean isToken(String credentialName) {
        return credentialName.startsWith("oauth:");
    }

    public OAuthGrant {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(clientOwner, "clientOwner");
        scope = scope == null ? Optional.empty() : scope;
        expiresAt = expiresAt == null ? Optional.empty() : expiresAt;
    }

    public OAuthGrant withExpiresAt(Optional<Long> expiry) {
        return new OAuthGrant(client, clientOwner, scope, expiry);
    }
}
