package dev.tether.replicas.forwarding;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.replicas.LocalChildren;
import dev.tether.session.SessionPool;

/** {@link LocalChildren} over the session pool, which owns every child of a stored connection. */
@Component
final class PooledChildren implements LocalChildren {

    private final SessionPool pool;

    PooledChildren(SessionPool pool) {
        this.pool = pool;
    }

    @Override
    public Mono<Void> endAll(String reason) {
        return pool.retireAll(reason);
    }
}
