package dev.tether.calls;

import java.util.Map;
import java.util.Optional;

import reactor.core.publisher.Mono;

import dev.tether.mcp.ToolAnswer;
import dev.tether.store.ConnectionKey;

/**
 * Where an execution's tool call goes when another replica on the same store owns the connection's warm session: to
 * that replica, so that one child per connection runs cluster-wide. Implemented where an HTTP client may live.
 */
public interface OwnerCalls {

    /** A replica alone: every call is served here. */
    OwnerCalls LOCAL = (connection, address, arguments, here) -> Optional.empty();

    /**
     * The call of the tool at {@code address} as {@code connection}'s owner answers it; empty when this replica owns
     * the connection. Cancelling the answer cancels the call at the owner. An owner that left before it took the call
     * (it is stopping) hands the connection over: the call goes to the new owner, or to {@code here}, the call on this
     * replica, when that is this one.
     */
    Optional<Mono<ToolAnswer>> atOwner(ConnectionKey connection, String address, Map<String, Object> arguments, Mono<ToolAnswer> here);
}
