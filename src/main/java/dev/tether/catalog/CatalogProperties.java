package dev.tether.catalog;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * When tool catalogs are re-listed.
 *
 * @param ttl             a catalog older than this is stale; default 15 min, as Executor
 * @param syncConcurrency catalog syncs run at once for one {@code GET /api/tools}; default 4
 */
@ConfigurationProperties("tether.catalog")
public record CatalogProperties(Duration ttl, Integer syncConcurrency) {

    public CatalogProperties {
        ttl = ttl == null ? Duration.ofMinutes(15) : ttl;
        syncConcurrency = syncConcurrency == null ? 4 : syncConcurrency;
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("tether.catalog.ttl must be positive, was " + ttl);
        }
        if (syncConcurrency < 1) {
            throw new IllegalArgumentException("tether.catalog.sync-concurrency must be at least 1, was " + syncConcurrency);
        }
    }
}
