package dev.tether.health;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Connection health checks.
 *
 * @param timeout     bound on one check, start-up and handshake included; default 20 s
 * @param concurrency checks of one generation that run at once; default 8
 * @param linger      how long a check nobody waits for anymore keeps running, so that a newer generation
 *                    (or a retrying client) that wants the same connection joins it instead of restarting it;
 *                    default 250 ms
 */
@ConfigurationProperties("tether.health")
public record HealthProperties(Duration timeout, Integer concurrency, Duration linger) {

    public HealthProperties {
        timeout = timeout == null ? Duration.ofSeconds(20) : timeout;
        concurrency = concurrency == null ? 8 : concurrency;
        linger = linger == null ? Duration.ofMillis(250) : linger;
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("tether.health.timeout must be positive, was " + timeout);
        }
        if (concurrency < 1) {
            throw new IllegalArgumentException("tether.health.concurrency must be at least 1, was " + concurrency);
        }
        if (linger.isNegative()) {
            throw new IllegalArgumentException("tether.health.linger must not be negative, was " + linger);
        }
    }

    public static HealthProperties defaults() {
        return new HealthProperties(null, null, null);
    }
}
