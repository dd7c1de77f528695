package dev.tether.replicas.forwarding;

import java.util.Optional;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.catalog.OwnerSyncs;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.store.ConnectionKey;

/**
 * A catalog sync for a peer's connection, sent to that peer as {@code POST /api/connections/…/refresh}; when the peer
 * provably did not take it, to the owner the leases name now, or {@code here}.
 */
@Component
final class OwnerCatalogSyncs implements OwnerSyncs {

    private final ConnectionOwners owners;
    private final PeerExchange peers;
    private final OwnerWork work;

    OwnerCatalogSyncs(ConnectionOwners owners, PeerExchange peers, OwnerWork work) {
        this.owners = owners;
        this.peers = peers;
        this.work = work;
    }

    @Override
    public Optional<Mono<Void>> atOwner(ConnectionKey connection, Mono<Void> here) {
        return owners.remoteOwner(connection).map(owner -> work.atOwner(connection, owner,
                peer -> peers.post(peer, connection, "refresh").then(), here));
    }
}
