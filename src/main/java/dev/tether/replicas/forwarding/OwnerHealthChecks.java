package dev.tether.replicas.forwarding;

import java.util.Optional;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.health.OwnerChecks;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;
import dev.tether.views.Views.HealthView;

/**
 * A batch's check of a peer's connection, sent to that peer as {@code POST /api/connections/…/health}; when the peer
 * provably did not take it, to the owner the leases name now, or {@code here}.
 */
@Component
final class OwnerHealthChecks implements OwnerChecks {

    private final ConnectionOwners owners;
    private final PeerExchange peers;
    private final OwnerWork work;
    private final JsonMapper json;

    OwnerHealthChecks(ConnectionOwners owners, PeerExchange peers, OwnerWork work, JsonMapper json) {
        this.owners = owners;
        this.peers = peers;
        this.work = work;
        this.json = json;
    }

    @Override
    public Optional<Mono<HealthVerdict>> atOwner(ConnectionKey connection, Mono<HealthVerdict> here) {
        return owners.remoteOwner(connection).map(owner -> work.atOwner(connection, owner,
                peer -> peers.post(peer, connection, "health")
                        .map(answer -> json.readValue(answer, HealthView.class))
                        .map(view -> new HealthVerdict(view.status(), view.checkedAt(), Optional.ofNullable(view.detail()))),
                here));
    }
}
