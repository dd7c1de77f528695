package dev.tether.session;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.ConstructorBinding;

import dev.tether.daemon.PropertyChecks;

/**
 * The pool of warm MCP sessions.
 *
 * @param idleTtl            a session nobody has leased for this long is torn down; default 5 min
 * @param maxSessions        live sessions (so live children) at most, across all connections; default 64
 * @param maxLeasesPerSession parallel leases (tool calls, checks, syncs) on one session; default 16
 * @param leaseWait          how long an asker beyond {@code max-leases-per-session} waits in line (first come,
 *                           first served) before it is refused with a 429; default 5 s
 * @param maxLeaseWaiters    askers waiting in line for one session at most; one more is refused at once; default 1024
 * @param abandonedStartLinger how long a session start every asker left goes on under the pool, for the next asker
 *                           to join; 0 tears it down at once; default 15 s, the default handshake bound
 * @param startWait          how long a session start waits for a place when {@code max-sessions} children are live
 *                           (an idle session gives way, a busy one is waited for); 0 refuses at once; default 30 s,
 *                           more than the teardown ladder of the child that makes room
 * @param maxPendingStarts   session starts waiting for a place at most; one more is refused at once; default 1024
 */
@ConfigurationProperties("tether.session")
public record SessionProperties(Duration idleTtl, Integer maxSessions, Integer maxLeasesPerSession, Duration leaseWait,
        Integer maxLeaseWaiters, Duration abandonedStartLinger, Duration startWait, Integer maxPendingStarts) {

    @ConstructorBinding
    public SessionProperties(@Nullable Duration idleTtl, @Nullable Integer maxSessions,
            @Nullable Integer maxLeasesPerSession, @Nullable Duration leaseWait, @Nullable Integer maxLeaseWaiters,
            @Nullable Duration abandonedStartLinger, @Nullable Duration startWait, @Nullable Integer maxPendingStarts) {
        leaseWait = PropertyChecks.notNegative("tether.session.lease-wait", leaseWait, Duration.ofSeconds(5));
        maxLeaseWaiters = PropertyChecks.atLeastOne("tether.session.max-lease-waiters", maxLeaseWaiters, 1024);
        idleTtl = PropertyChecks.positive("tether.session.idle-ttl", idleTtl, Duration.ofMinutes(5));
        maxSessions = PropertyChecks.atLeastOne("tether.session.max-sessions", maxSessions, 64);
        maxLeasesPerSession = PropertyChecks.atLeastOne("tether.session.max-leases-per-session", maxLeasesPerSession, 16);
        abandonedStartLinger = PropertyChecks.notNegative("tether.session.abandoned-start-linger", abandonedStartLinger,
                Duration.ofSeconds(15));
        startWait = PropertyChecks.notNegative("tether.session.start-wait", startWait, Duration.ofSeconds(30));
        maxPendingStarts = PropertyChecks.atLeastOne("tether.session.max-pending-starts", maxPendingStarts, 1024);
        this.idleTtl = idleTtl;
        this.maxSessions = maxSessions;
        this.maxLeasesPerSession = maxLeasesPerSession;
        this.leaseWait = leaseWait;
        this.maxLeaseWaiters = maxLeaseWaiters;
        this.abandonedStartLinger = abandonedStartLinger;
        this.startWait = startWait;
        this.maxPendingStarts = maxPendingStarts;
    }

    /** The pool's caps, the lease queue and the linger, with the defaults of the start queue. */
    public SessionProperties(@Nullable Duration idleTtl, @Nullable Integer maxSessions,
            @Nullable Integer maxLeasesPerSession, @Nullable Duration leaseWait, @Nullable Integer maxLeaseWaiters,
            @Nullable Duration abandonedStartLinger) {
        this(idleTtl, maxSessions, maxLeasesPerSession, leaseWait, maxLeaseWaiters, abandonedStartLinger, null, null);
    }

    /** The pool's caps, with the defaults of the lease queue and the linger. */
    public SessionProperties(@Nullable Duration idleTtl, @Nullable Integer maxSessions,
            @Nullable Integer maxLeasesPerSession) {
        this(idleTtl, maxSessions, maxLeasesPerSession, null, null, null);
    }

    public static SessionProperties defaults() {
        return new SessionProperties(null, null, null);
    }
}
