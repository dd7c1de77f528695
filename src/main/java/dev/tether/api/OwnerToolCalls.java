package dev.tether.api;

import java.util.Map;
import java.util.Optional;

import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.calls.OwnerCalls;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.store.ConnectionKey;

/** An execution's tool call for a peer's connection, sent to that peer as {@code POST /api/tools/call}. */
@Component
final class OwnerToolCalls implements OwnerCalls {

    private final ConnectionOwners owners;
    private final PeerExchange peers;

    OwnerToolCalls(ConnectionOwners owners, PeerExchange peers) {
        this.owners = owners;
        this.peers = peers;
    }

    @Override
    public Optional<Mono<CallToolResult>> atOwner(ConnectionKey connection, String address, Map<String, Object> arguments) {
        return owners.remoteOwner(connection).map(peer -> peers.callTool(peer, address, arguments));
    }
}
