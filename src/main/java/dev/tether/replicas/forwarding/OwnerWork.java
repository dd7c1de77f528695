package dev.tether.replicas.forwarding;

import java.util.function.Function;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.ConnectionOwners.Peer;
import dev.tether.store.ConnectionKey;

/**
 * Work for a connection done at its owner, with the handover rule every route to an owner follows: an owner that
 * provably did not take the work hands it to the owner the leases name now.
 */
@Component
final class OwnerWork {

    private final ConnectionOwners owners;

    OwnerWork(ConnectionOwners owners) {
        this.owners = owners;
    }

    /**
     * Sends work for {@code connection} to its owner {@code owner} ({@code send}); when that owner provably did not
     * take it (it refused the connection, or is draining), reads the leases once more and sends it to the owner they
     * name now, or runs {@code here} when that is this replica. The same owner again means it left without a word to
     * the store (killed): the failure stands until its lease runs out. A caller that leaves cancels all of it.
     */
    <T> Mono<T> atOwner(ConnectionKey connection, Peer owner, Function<Peer, Mono<T>> send, Mono<T> here) {
        return send.apply(owner).onErrorResume(OwnerLeftException.class, left -> owners.remoteOwnerAfresh(connection)
                .flatMap(next -> next.isEmpty() ? here : next.get().equals(owner) ? Mono.error(left) : send.apply(next.get())));
    }
}
