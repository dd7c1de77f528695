package dev.tether.store;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How the store keeps secrets.
 *
 * @param secretKey the AES-256 key that encrypts secret values at rest, base64 (32 bytes); default none, and then
 *                  {@code <data-dir>/secret.key} (created {@code 0600} on first start). Set it
 *                  ({@code TETHER_STORE_SECRET_KEY}) where the data dir is not kept, e.g. with PostgreSQL in
 *                  Kubernetes: the key must never live in the database it protects.
 */
@ConfigurationProperties("tether.store")
public record StoreProperties(String secretKey) {

    @Override
    public String toString() {
        return "StoreProperties[secretKey=" + (secretKey == null || secretKey.isBlank() ? "unset" : "***") + "]";
    }
}
