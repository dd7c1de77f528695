package dev.tether.replicas;

import reactor.core.publisher.Mono;

/**
 * The children this replica runs for its connections, as a replica taken for dead ends them before it serves again
 * ({@link ReplicaLease}): implemented in {@code api} over the session pool.
 */
public interface LocalChildren {

    /** Ends every child of a connection here, and completes once each is gone (its teardown ended, its container removed). */
    Mono<Void> endAll(String reason);

    /** A replica that runs no children. */
    LocalChildren NONE = reason -> Mono.empty();
}
