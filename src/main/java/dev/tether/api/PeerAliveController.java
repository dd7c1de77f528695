package dev.tether.api;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.forwarding.Alive;

/**
 * {@code GET /api/replicas/alive}: a peer whose lease this replica let run out asks whether it is still here before it
 * takes it for dead ({@code replicas.ReplicaLiveness}). Answered on the event loop with nothing read or waited for, so
 * that a replica whose renewals were slow (starved of CPU, its store queued) says so, and one that is frozen does not.
 */
@RestController
final class PeerAliveController {

    private final ConnectionOwners owners;

    PeerAliveController(ConnectionOwners owners) {
        this.owners = owners;
    }

    @GetMapping(Alive.PATH)
    Mono<Alive> alive() {
        return Mono.just(new Alive(owners.instance()));
    }
}
