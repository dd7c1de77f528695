package dev.tether.session;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.ConstructorBinding;

import dev.tether.Settings;

/**
 * The pool of warm MCP sessions.
 *
 * @param idleTtl            a session nobody has leased for this long is torn down; default 5 min
 * @param maxSessions        live sessions (so live children) at most, across all connections; default 64
 * @param maxLeasesPerSession parallel leases (tool calls, checks, syncs) on one session; default 16
 * @param abandonedStartLinger how long a session start every asker left goes on under the pool, for the next asker
 *                           to join; 0 tears it down at once; default 15 s, the default handshake bound
 */
@ConfigurationProperties("tether.session")
public record SessionProperties(Duration idleTtl, Integer maxSessions, Integer maxLeasesPerSession,
        Duration abandonedStartLinger) {

    @ConstructorBinding
    public SessionProperties {
        idleTtl = Settings.positive("tether.session.idle-ttl", idleTtl, Duration.ofMinutes(5));
        maxSessions = Settings.atLeastOne("tether.session.max-sessions", maxSessions, 64);
        maxLeasesPerSession = Settings.atLeastOne("tether.session.max-leases-per-session", maxLeasesPerSession, 16);
        abandonedStartLinger = Settings.notNegative("tether.session.abandoned-start-linger", abandonedStartLinger,
                Duration.ofSeconds(15));
    }

    /** The pool's caps, with the default linger. */
    public SessionProperties(Duration idleTtl, Integer maxSessions, Integer maxLeasesPerSession) {
        this(idleTtl, maxSessions, maxLeasesPerSession, null);
    }

    public static SessionProperties defaults() {
        return new SessionProperties(null, null, null);
    }
}
