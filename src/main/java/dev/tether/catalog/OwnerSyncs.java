package dev.tether.catalog;

import java.util.Optional;

import reactor.core.publisher.Mono;

import dev.tether.store.ConnectionKey;

/**
 * Where a catalog sync goes when another replica on the same store owns the connection's warm session: to that
 * replica, which syncs on its session and stores the catalog, so that one child per connection runs cluster-wide.
 * Implemented where an HTTP client may live.
 */
public interface OwnerSyncs {

    /** A replica alone: every sync runs here. */
    OwnerSyncs LOCAL = (connection, here) -> Optional.empty();

    /**
     * The sync of {@code connection}'s catalog at its owner, completing once the owner has stored the catalog; empty
     * when this replica owns the connection. Cancelling it cancels the owner's wait, not a sync others wait for. An
     * owner that left before it took the sync (it is stopping) hands the connection over: the sync goes to the new
     * owner, or to {@code here}, the sync on this replica, when that is this one.
     */
    Optional<Mono<Void>> atOwner(ConnectionKey connection, Mono<Void> here);
}
