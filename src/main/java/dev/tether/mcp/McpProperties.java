package dev.tether.mcp;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tether.daemon.PropertyChecks;

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

    public McpProperties(@Nullable Duration discoveryTimeout, @Nullable Duration pingTimeout,
            @Nullable Duration callTimeout, @Nullable Integer maxToolPages, @Nullable Duration closeTimeout) {
        discoveryTimeout = PropertyChecks.positive("tether.mcp.discovery-timeout", discoveryTimeout, Duration.ofSeconds(15));
        pingTimeout = PropertyChecks.positive("tether.mcp.ping-timeout", pingTimeout, Duration.ofSeconds(10));
        callTimeout = PropertyChecks.positive("tether.mcp.call-timeout", callTimeout, Duration.ofSeconds(60));
        maxToolPages = PropertyChecks.atLeastOne("tether.mcp.max-tool-pages", maxToolPages, 100);
        closeTimeout = PropertyChecks.positive("tether.mcp.close-timeout", closeTimeout, Duration.ofSeconds(5));
        this.discoveryTimeout = discoveryTimeout;
        this.pingTimeout = pingTimeout;
        this.callTimeout = callTimeout;
        this.maxToolPages = maxToolPages;
        this.closeTimeout = closeTimeout;
    }

    public static McpProperties defaults() {
        return new McpProperties(null, null, null, null, null);
    }
}
