package dev.tether.api;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tether.Settings;

/**
 * The HTTP API.
 *
 * @param token           a fixed bearer token; by default one is generated on first start and kept in
 *                        {@code <dataDir>/server-control/auth.json}
 * @param streamKeepAlive how often an open event stream ({@code GET /mcp}, {@code GET /sse}, a streamed answer)
 *                        that has nothing to say sends a comment, so that proxies do not cut it as idle; default 15 s
 */
@ConfigurationProperties("tether.api")
public record ApiProperties(String token, Duration streamKeepAlive) {

    public ApiProperties {
        streamKeepAlive = Settings.positive("tether.api.stream-keep-alive", streamKeepAlive, Duration.ofSeconds(15));
    }
}
