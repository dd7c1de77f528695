package dev.tether.api;

import java.util.Optional;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.replicas.ConnectionFence;
import dev.tether.session.StartFence;
import dev.tether.store.ConnectionKey;

/**
 * The session pool's {@link StartFence} over {@link ConnectionFence}: where replicas share a store, a connection's child
 * is fenced by its key, and a container of it starts only once the engine holds no other replica's container of it.
 */
@Component
final class FencedStarts implements StartFence {

    private final ConnectionFence fence;

    FencedStarts(ConnectionFence fence) {
        this.fence = fence;
    }

    @Override
    public Mono<Cleared> clear(ConnectionKey connection, boolean container) {
        if (!fence.shared()) {
            return Mono.just(Cleared.NOTHING);
        }
        return fence.key(connection).flatMap(key -> (container ? fence.clear(connection, key) : Mono.just(false))
                .map(found -> new Cleared(Optional.of(key), found)));
    }
}
