package dev.tether.session;

import java.util.Optional;

import reactor.core.publisher.Mono;

import dev.tether.store.ConnectionKey;

/**
 * What a pooled session's child waits for before it starts, where other processes may run a child of the same
 * connection: replicas sharing a store. The pool asks just before it spawns, after its own previous child of the
 * connection is gone; a replica's implementation (in {@code api}, over {@code replicas.ConnectionFence}) clears the
 * way on the Docker engine and names the fence the child's container is named and labelled by.
 */
public interface StartFence {

    /** Where the way is clear: the key that fences the connection's child (empty: none), and whether it had to be cleared. */
    record Cleared(Optional<String> key, boolean foundOthers) {

        public static final Cleared NOTHING = new Cleared(Optional.empty(), false);
    }

    /**
     * Completes once a child of {@code connection} may start here: no other process's container of it runs on the
     * engine ({@code container}: the child is a {@code docker run} client) or may still be started by one. Fails when
     * the way does not clear in time.
     */
    Mono<Cleared> clear(ConnectionKey connection, boolean container);

    /** One daemon alone on its store: nothing to fence. */
    StartFence NONE = (connection, container) -> Mono.just(Cleared.NOTHING);
}
