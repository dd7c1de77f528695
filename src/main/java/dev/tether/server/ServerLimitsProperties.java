package dev.tether.server;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tether.daemon.PropertyChecks;

/**
 * How long the HTTP server waits for a slow client, and how many it serves at once.
 *
 * @param headerTimeout  a connection must send a whole request head (request line and headers) within this, from
 *                       its first byte, or from its opening for its first request; default 10 s
 * @param bodyTimeout    and the whole body within this after its head; default 30 s
 * @param idleTimeout    a keep-alive connection with no request in flight is closed after this; default 5 min
 * @param maxConnections connections open at once; one more is closed as soon as it is accepted; default 512
 */
@ConfigurationProperties("tether.server")
public record ServerLimitsProperties(Duration headerTimeout, Duration bodyTimeout, Duration idleTimeout, Integer maxConnections) {

    public ServerLimitsProperties {
        headerTimeout = PropertyChecks.positive("tether.server.header-timeout", headerTimeout, Duration.ofSeconds(10));
        bodyTimeout = PropertyChecks.positive("tether.server.body-timeout", bodyTimeout, Duration.ofSeconds(30));
        idleTimeout = PropertyChecks.positive("tether.server.idle-timeout", idleTimeout, Duration.ofMinutes(5));
        maxConnections = PropertyChecks.atLeastOne("tether.server.max-connections", maxConnections, 512);
    }
}
