package dev.tether.replicas.forwarding;

import java.util.Optional;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.replicas.ConnectionFence;
import dev.tether.replicas.ReplicaLease;
import dev.tether.session.StartFence;
import dev.tether.store.ConnectionKey;

/**
 * The session pool's {@link StartFence} over {@link ConnectionFence}: where replicas share a store, a connection's child
 * starts only while this replica holds its lease, is fenced by its key, and a container of it starts only once the
 * engine holds no other replica's container of it.
 */
@Component
final class FencedStarts implements StartFence {

    private final ConnectionFence fence;
    private final ReplicaLease lease;

    FencedStarts(ConnectionFence fence, ReplicaLease lease) {
        this.fence = fence;
        this.lease = lease;
    }

    /**
     * Only while this replica holds its lease (a child started without it could run beside the child of a peer that
     * took this replica for dead), then, for a container, once the engine holds no other replica's of the connection.
     */
    @Override
    public Mono<Cleared> clear(ConnectionKey connection, boolean container) {
        if (!fence.shared()) {
            return Mono.just(Cleared.NOTHING);
        }
        return lease.serving().then(fence.key(connection)).flatMap(key -> (container ? fence.clear(connection, key)
                : Mono.just(false)).map(found -> new Cleared(Optional.of(key), found)));
    }
}
