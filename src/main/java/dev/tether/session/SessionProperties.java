package dev.tether.session;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tether.Settings;

/**
 * The pool of warm MCP sessions.
 *
 * @param idleTtl            a session nobody has leased for this long is torn down; default 5 min
 * @param maxSessions        live sessions (so live children) at most, across all connections; default 64
 * @param maxLeasesPerSession parallel leases (tool calls, checks, syncs) on one session; default 16
 */
@ConfigurationProperties("tether.session")
public record SessionProperties(Duration idleTtl, Integer maxSessions, Integer maxLeasesPerSession) {

    public SessionProperties {
        idleTtl = Settings.positive("tether.session.idle-ttl", idleTtl, Duration.ofMinutes(5));
        maxSessions = Settings.atLeastOne("tether.session.max-sessions", maxSessions, 64);
        maxLeasesPerSession = Settings.atLeastOne("tether.session.max-leases-per-session", maxLeasesPerSession, 16);
    }

    public static SessionProperties defaults() {
        return new SessionProperties(null, null, null);
    }
}
