package dev.tether.catalog;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * When tool catalogs are re-listed.
 *
 * @param ttl             a catalog older than this is stale; default 15 min, as Executor
 * @param syncConcurrency catalog syncs that run at once, across all connections; default 4
 * @param grace           how long {@code GET /api/tools} waits for stale catalogs before answering from the store
 *                        while their syncs go on in the background; default 2 s
 */
@ConfigurationProperties("tether.catalog")
public record CatalogProperties(Duration ttl, Integer syncConcurrency, Duration grace) {

    public CatalogProperties {
        ttl = ttl == null ? Duration.ofMinutes(15) : ttl;
        syncConcurrency = syncConcurrency == null ? 4 : syncConcurrency;
        grace = grace == null ? Duration.ofSeconds(2) : grace;
        if (grace.isNegative()) {
            throw new IllegalArgumentException("tether.catalog.grace must not be negative, was " + grace);
        }
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("tether.catalog.ttl must be positive, was " + ttl);
        }
        if (syncConcurrency < 1) {
            throw new IllegalArgumentException("tether.catalog.sync-concurrency must be at least 1, was " + syncConcurrency);
        }
    }

    public static CatalogProperties defaults() {
        return new CatalogProperties(null, null, null);
    }
}
