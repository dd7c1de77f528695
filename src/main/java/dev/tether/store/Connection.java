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
 */
public record Connection(ConnectionKey key, String template, Optional<String> identityLabel,
        Optional<HealthVerdict> lastHealth) {

    public Connection {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(template, "template");
        identityLabel = identityLabel == null ? Optional.empty() : identityLabel;
        lastHealth = lastHealth == null ? Optional.empty() : lastHealth;
    }

    public Connection withHealth(HealthVerdict verdict) {
        return new Connection(key, template, identityLabel, Optional.of(verdict));
    }
}
