package dev.tether.session;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

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
        idleTtl = idleTtl == null ? Duration.ofMinutes(5) : idleTtl;
        maxSessions = maxSessions == null ? 64 : maxSessions;
        maxLeasesPerSession = maxLeasesPerSession == null ? 16 : maxLeasesPerSession;
        if (idleTtl.isNegative() || idleTtl.isZero()) {
            throw new IllegalArgumentException("tether.session.idle-ttl must be positive, was " + idleTtl);
        }
        if (maxSessions < 1) {
            throw new IllegalArgumentException("tether.session.max-sessions must be at least 1, was " + maxSessions);
        }
        if (maxLeasesPerSession < 1) {
            throw new IllegalArgumentException("tether.session.max-leases-per-session must be at least 1, was " + maxLeasesPerSession);
        }
    }

    public static SessionProperties defaults() {
        return new SessionProperties(null, null, null);
    }
}
