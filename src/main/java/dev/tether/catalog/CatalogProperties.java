package dev.tether.catalog;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tether.daemon.PropertyChecks;

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

    public CatalogProperties(@Nullable Duration ttl, @Nullable Integer syncConcurrency, @Nullable Duration grace) {
        ttl = PropertyChecks.positive("tether.catalog.ttl", ttl, Duration.ofMinutes(15));
        syncConcurrency = PropertyChecks.atLeastOne("tether.catalog.sync-concurrency", syncConcurrency, 4);
        grace = PropertyChecks.notNegative("tether.catalog.grace", grace, Duration.ofSeconds(2));
        this.ttl = ttl;
        this.syncConcurrency = syncConcurrency;
        this.grace = grace;
    }

    public static CatalogProperties defaults() {
        return new CatalogProperties(null, null, null);
    }
}
