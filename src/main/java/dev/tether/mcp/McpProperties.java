package dev.tether.mcp;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Bounds on MCP conversations with a server.
 *
 * @param discoveryTimeout bound on the handshake and on listing every page of tools; default 15 s, as Executor
 * @param pingTimeout      bound on a liveness ping; default 10 s
 * @param callTimeout      bound on one {@code tools/call}; default 60 s
 * @param maxToolPages     pages of {@code tools/list} followed before the catalog is called incomplete; default 100
 * @param closeTimeout     bound on saying goodbye to a remote server (the SDK's graceful close may wait on an
 *                         endpoint that stopped answering); after it the session is closed at once; default 5 s
 */
@ConfigurationProperties("tether.mcp")
public record McpProperties(Duration discoveryTimeout, Duration pingTimeout, Duration callTimeout, Integer maxToolPages,
        Duration closeTimeout) {

    public McpProperties {
        discoveryTimeout = positive(discoveryTimeout, Duration.ofSeconds(15), "discovery-timeout");
        pingTimeout = positive(pingTimeout, Duration.ofSeconds(10), "ping-timeout");
        callTimeout = positive(callTimeout, Duration.ofSeconds(60), "call-timeout");
        maxToolPages = maxToolPages == null ? 100 : maxToolPages;
        closeTimeout = positive(closeTimeout, Duration.ofSeconds(5), "close-timeout");
        if (maxToolPages < 1) {
            throw new IllegalArgumentException("tether.mcp.max-tool-pages must be at least 1, was " + maxToolPages);
        }
    }

    public static McpProperties defaults() {
        return new McpProperties(null, null, null, null, null);
    }

    private static Duration positive(Duration value, Duration fallback, String name) {
        if (value == null) {
            return fallback;
        }
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException("tether.mcp." + name + " must be positive, was " + value);
        }
        return value;
    }
}
