package dev.tether.replicas.forwarding;

import java.util.Map;
import java.util.Optional;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.calls.OwnerCalls;
import dev.tether.mcp.ToolAnswer;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.store.ConnectionKey;

/**
 * An execution's or an agent's tool call for a peer's connection, sent to that peer ({@link PeerToolCalls#callTool});
 * when the peer provably did not take it (it refused the connection, or is draining), sent once more to the owner the
 * leases name now, or called {@code here} when that is this replica.
 */
@Component
final class OwnerToolCalls implements OwnerCalls {

    private final ConnectionOwners owners;
    private final PeerToolCalls peers;
    private final OwnerWork work;

    OwnerToolCalls(ConnectionOwners owners, PeerToolCalls peers, OwnerWork work) {
        this.owners = owners;
        this.peers = peers;
        this.work = work;
    }

    @Override
    public Optional<Mono<ToolAnswer>> atOwner(ConnectionKey connection, String address, Map<String, Object> arguments,
            Mono<ToolAnswer> here) {
        return owners.remoteOwner(connection).map(owner -> work.atOwner(connection, owner,
                peer -> peers.callTool(peer, address, arguments).map(ToolAnswer::of), here));
    }
}
