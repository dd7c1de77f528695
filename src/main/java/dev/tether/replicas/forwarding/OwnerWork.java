package dev.tether.replicas.forwarding;

import java.util.Optional;
import java.util.function.Function;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.calls.OwnerCalls;
import dev.tether.catalog.OwnerSyncs;
import dev.tether.health.OwnerChecks;
import dev.tether.mcp.ToolAnswer;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.ConnectionOwners.Peer;
import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;
import dev.tether.views.Views.HealthView;

/**
 * Work for a connection done at its owner, with the handover rule every route to an owner follows: an owner that
 * provably did not take the work hands it to the owner the leases name now. The feature packages' ports to a
 * connection's owner are this one shape, each with its own request: an execution's or an agent's tool call
 * ({@link OwnerCalls}, {@code POST /api/replicas/calls}), a catalog sync ({@link OwnerSyncs},
 * {@code POST /api/connections/…/refresh}) and a batch's health check ({@link OwnerChecks},
 * {@code POST /api/connections/…/health}).
 */
@Configuration(proxyBeanMethods = false)
final class OwnerWork {

    private final ConnectionOwners owners;
    private final PeerExchange peers;
    private final PeerToolCalls calls;
    private final JsonMapper json;

    OwnerWork(ConnectionOwners owners, PeerExchange peers, PeerToolCalls calls, JsonMapper json) {
        this.owners = owners;
        this.peers = peers;
        this.calls = calls;
        this.json = json;
    }

    @Bean
    OwnerCalls ownerCalls() {
        return (connection, address, arguments, here) -> atOwner(connection,
                peer -> calls.callTool(peer, address, arguments).map(ToolAnswer::of), here);
    }

    @Bean
    OwnerSyncs ownerSyncs() {
        return (connection, here) -> atOwner(connection, peer -> peers.post(peer, connection, "refresh").then(), here);
    }

    @Bean
    OwnerChecks ownerChecks() {
        return (connection, here) -> atOwner(connection, peer -> peers.post(peer, connection, "health")
                .map(answer -> json.readValue(answer, HealthView.class))
                .map(view -> new HealthVerdict(view.status(), view.checkedAt(), Optional.ofNullable(view.detail()))), here);
    }

    /**
     * The work {@code send} at {@code connection}'s owner, handed over as
     * {@link #atOwner(ConnectionKey, Peer, Function, Mono)} says; empty when this replica owns the connection.
     */
    private <T> Optional<Mono<T>> atOwner(ConnectionKey connection, Function<Peer, Mono<T>> send, Mono<T> here) {
        return owners.remoteOwner(connection).map(owner -> atOwner(connection, owner, send, here));
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
