package dev.tether.replicas.forwarding;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.replicas.PeerProbe;
import dev.tether.store.leases.InstanceLeases.Lease;

/** {@link PeerProbe} over HTTP: the lease's address asked at {@code GET /api/replicas/alive} with the replicas' token. */
@Component
final class PeerProbes implements PeerProbe {

    private final PeerExchange peers;

    PeerProbes(PeerExchange peers) {
        this.peers = peers;
    }

    @Override
    public Mono<Boolean> answers(Lease lease) {
        return peers.alive(lease.address()).map(lease.instance()::equals);
    }
}
