package dev.tether.replicas.forwarding;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.OwnersRead;
import dev.tether.session.SessionPool;

/**
 * One warm child per connection cluster-wide, when owners change: this replica retires its sessions of the
 * connections another replica owns now, as when it begins to drain (the new owners start theirs at their next
 * request), or when a replica that stood in for a stopped one sees it come back. An idle session goes at once, one in
 * use as soon as its requests in flight are answered (no new ones reach it: they go to the owner). It looks at every
 * read of the leases, not only at a change: a request that found this replica the owner just before the read may
 * start a session just after it, and the owner's fence would wait for that session's container until it idled out.
 */
@Component
final class MovedSessions {

    private static final Logger log = LoggerFactory.getLogger(MovedSessions.class);

    private final ConnectionOwners owners;
    private final SessionPool pool;

    MovedSessions(ConnectionOwners owners, SessionPool pool) {
        this.owners = owners;
        this.pool = pool;
    }

    @EventListener
    void ownersRead(OwnersRead read) {
        int retired = pool.retireOnceIdle(connection -> owners.remoteOwner(connection).isPresent(),
                "its connection is owned by another replica now");
        if (retired > 0) {
            log.info("retired {} idle session(s) of connections other replicas own now; those in use go once idle", retired);
        }
    }
}
