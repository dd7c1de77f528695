package dev.tether.store;

import java.util.Objects;
import java.util.Optional;

/**
 * A configured use of an integration. Its credential values live in the {@link CredentialStore}, not here.
 *
 * @param key           owner, integration and name
 * @param template      the auth template it was created with
 * @param identityLabel a human label for whose credentials these are
 * @param lastHealth    the last persisted health verdict, if any
 * @param oauth         for a connection made by an OAuth flow: its client, scope and token expiry
 */
public record Connection(ConnectionKey key, String template, Optional<String> identityLabel,
        Optional<HealthVerdict> lastHealth, Optional<OAuthGrant> oauth) {

    public Connection {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(template, "template");
        identityLabel = identityLabel == null ? Optional.empty() : identityLabel;
        lastHealth = lastHealth == null ? Optional.empty() : lastHealth;
        oauth = oauth == null ? Optional.empty() : oauth;
    }

    /** A connection with credentials given by hand, not by an OAuth flow. */
    public Connection(ConnectionKey key, String template, Optional<String> identityLabel, Optional<HealthVerdict> lastHealth) {
        this(key, template, identityLabel, lastHealth, Optional.empty());
    }

    public Connection withHealth(HealthVerdict verdict) {
        return new Connection(key, template, identityLabel, Optional.of(verdict), oauth);
    }

    public Connection withOAuth(OAuthGrant grant) {
        return new Connection(key, template, identityLabel, lastHealth, Optional.of(grant));
    }
}
