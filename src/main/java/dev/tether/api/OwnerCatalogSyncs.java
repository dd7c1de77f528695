package dev.tether.api;

import java.util.Optional;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.catalog.OwnerSyncs;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.store.ConnectionKey;

/** A catalog sync for a peer's connection, sent to that peer as {@code POST /api/connections/…/refresh}. */
@Component
final class OwnerCatalogSyncs implements OwnerSyncs {

    private final ConnectionOwners owners;
    private final PeerExchange peers;

    OwnerCatalogSyncs(ConnectionOwners owners, PeerExchange peers) {
        this.owners = owners;
        this.peers = peers;
    }

    @Override
    public Optional<Mono<Void>> atOwner(ConnectionKey connection) {
        return owners.remoteOwner(connection)
                .map(peer -> peers.post(peer, ConnectionPaths.of(connection, "refresh"), "the session of " + connection).then());
    }
}
