package dev.tether.api;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.tether.replicas.ConnectionOwners;

/**
 * {@code GET /api/replicas/alive}: a peer whose lease this replica let run out asks whether it is still here before it
 * takes it for dead ({@code replicas.ReplicaLiveness}). Answered on the event loop with nothing read or waited for, so
 * that a replica whose renewals were slow (starved of CPU, its store queued) says so, and one that is frozen does not.
 */
@RestController
final class PeerAliveController {

    static final String PATH = "/api/replicas/alive";

    /** Which replica answered: another may listen at a dead one's address by now. */
    record Alive(String instance) {
    }

    private final ConnectionOwners owners;

    PeerAliveController(ConnectionOwners owners) {
        this.owners = owners;
    }

    @GetMapping(PATH)
    Mono<Alive> alive() {
        return Mono.just(new Alive(owners.instance()));
    }
}
