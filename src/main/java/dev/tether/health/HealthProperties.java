package dev.tether.health;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tether.daemon.PropertyChecks;

/**
 * Connection health checks.
 *
 * @param timeout     how long a check waits for its server to start, handshake included (a warm session's ping is
 *                    bounded by {@code tether.mcp.ping-timeout}); default 20 s
 * @param concurrency checks of one generation that run at once; default 8
 * @param linger      how long a check nobody waits for anymore keeps running, so that a newer generation
 *                    (or a retrying client) that wants the same connection joins it instead of restarting it;
 *                    default 250 ms
 */
@ConfigurationProperties("tether.health")
public record HealthProperties(Duration timeout, Integer concurrency, Duration linger) {

    public HealthProperties(@Nullable Duration timeout, @Nullable Integer concurrency, @Nullable Duration linger) {
        timeout = PropertyChecks.positive("tether.health.timeout", timeout, Duration.ofSeconds(20));
        concurrency = PropertyChecks.atLeastOne("tether.health.concurrency", concurrency, 8);
        linger = PropertyChecks.notNegative("tether.health.linger", linger, Duration.ofMillis(250));
        this.timeout = timeout;
        this.concurrency = concurrency;
        this.linger = linger;
    }

    public static HealthProperties defaults() {
        return new HealthProperties(null, null, null);
    }
}
