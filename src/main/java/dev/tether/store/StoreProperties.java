package dev.tether.store;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tether.daemon.PropertyChecks;

/**
 * The store: how this daemon holds it in memory and how it keeps secrets.
 *
 * @param writeBehind   health verdicts are written to the database at most this long after they are reached,
 *                      only the newest per connection; default 500 ms
 * @param changePoll    how often to look for rows other replicas changed in a shared PostgreSQL; default 1 s
 * @param flushTimeout  how long a graceful stop waits for pending verdicts to reach the database; default 5 s
 * @param secretKey     the AES-256 key that encrypts secret values at rest, base64 (32 bytes); default none, and then
 *                      {@code <data-dir>/secret.key} (created {@code 0600} on first start). Set it
 *                      ({@code TETHER_STORE_SECRET_KEY}) where the data dir is not kept, e.g. with PostgreSQL in
 *                      Kubernetes: the key must never live in the database it protects.
 */
@ConfigurationProperties("tether.store")
public record StoreProperties(Duration writeBehind, Duration changePoll, Duration flushTimeout, @Nullable String secretKey) {

    public StoreProperties(@Nullable Duration writeBehind, @Nullable Duration changePoll,
            @Nullable Duration flushTimeout, @Nullable String secretKey) {
        writeBehind = PropertyChecks.positive("tether.store.write-behind", writeBehind, Duration.ofMillis(500));
        changePoll = PropertyChecks.positive("tether.store.change-poll", changePoll, Duration.ofSeconds(1));
        flushTimeout = PropertyChecks.positive("tether.store.flush-timeout", flushTimeout, Duration.ofSeconds(5));
        this.writeBehind = writeBehind;
        this.changePoll = changePoll;
        this.flushTimeout = flushTimeout;
        this.secretKey = secretKey;
    }

    public static StoreProperties defaults() {
        return new StoreProperties(null, null, null, null);
    }

    @Override
    public String toString() {
        return "StoreProperties[writeBehind=" + writeBehind + ", changePoll=" + changePoll + ", flushTimeout=" + flushTimeout
                + ", secretKey=" + (secretKey == null || secretKey.isBlank() ? "unset" : "***") + "]";
    }
}
