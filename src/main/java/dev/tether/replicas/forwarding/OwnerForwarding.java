package dev.tether.replicas.forwarding;

import java.util.Map;
import java.util.Optional;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.api.input.Inputs;
import dev.tether.calls.ToolAddress;
import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.ConnectionOwners.Peer;
import dev.tether.store.ConnectionKey;

/**
 * Replicas on one store keep one warm session per connection, on its owner ({@link ConnectionOwners}): a health
 * check, a catalog refresh or a tool call for a connection another replica owns is passed to that replica
 * ({@link PeerRelay}) before the controllers, so that the services below never learn that another replica
 * exists: they serve what reaches them. Once the owner's lease runs out, or it marks its lease draining, ownership
 * moves; a forward that its owner provably did not take (the connection refused, or the owner draining) goes to the new
 * owner at once. A draining replica refuses what peers still forward to it as owner. On an embedded store nothing is
 * forwarded and the filter costs one boolean test.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 10)
final class OwnerForwarding implements WebFilter {

    private static final PathPattern CONNECTION_ROUTE =
            PathPatternParser.defaultInstance.parse("/api/connections/{owner}/{integration}/{name}/{action:health|refresh}");
    private static final PathPattern CALL_ROUTE = PathPatternParser.defaultInstance.parse("/api/tools/call");
    /** Where a peer calls a tool at its connection's owner for an execution or an agent ({@code api.PeerCallsController}). */
    private static final PathPattern PEER_CALL_ROUTE = PathPatternParser.defaultInstance.parse("/api/replicas/calls");
    private static final String WHAT = "this connection's session";

    private final ConnectionOwners owners;
    private final PeerRelay relay;
    private final OwnerWork work;
    private final HeldBody bodies;
    private final JsonMapper json;

    OwnerForwarding(ConnectionOwners owners, PeerRelay relay, OwnerWork work, HeldBody bodies, JsonMapper json) {
        this.owners = owners;
        this.relay = relay;
        this.work = work;
        this.bodies = bodies;
        this.json = json;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        if (!owners.shared() || request.getMethod() != HttpMethod.POST) {
            return chain.filter(exchange);
        }
        PathPattern.PathMatchInfo connectionRoute = CONNECTION_ROUTE.matchAndExtract(request.getPath().pathWithinApplication());
        boolean callRoute = connectionRoute == null && CALL_ROUTE.matches(request.getPath().pathWithinApplication());
        if (PeerExchange.forwarded(exchange)) {
            // Sent here as to the owner, which a draining replica is not: the sender reads the leases again.
            boolean asOwner = connectionRoute != null || callRoute || PEER_CALL_ROUTE.matches(request.getPath().pathWithinApplication());
            return owners.leaving() && asOwner ? relay.refuseDraining(exchange)
                    : chain.filter(exchange);
        }
        if (connectionRoute != null) {
            Optional<ConnectionKey> connection = connection(connectionRoute.getUriVariables(), caller(exchange));
            Optional<Peer> owner = connection.flatMap(owners::remoteOwner);
            return owner.isEmpty() ? chain.filter(exchange)
                    : bodies.read(exchange, body -> toOwner(exchange, chain, connection.get(), owner.get(), body));
        }
        if (!callRoute) {
            return chain.filter(exchange);
        }
        // The connection is named in the body: read it once, then send or serve those very bytes.
        return bodies.read(exchange, body -> {
            Optional<ConnectionKey> connection = calledConnection(body, caller(exchange));
            Optional<Peer> owner = connection.flatMap(owners::remoteOwner);
            return owner.isPresent() ? toOwner(exchange, chain, connection.get(), owner.get(), body) : HeldBody.here(exchange, chain, body);
        });
    }

    /**
     * Forwards to {@code owner}, handing over as every route to an owner does ({@link OwnerWork#atOwner}); an owner
     * that still did not take it is a 503 that names it. A client that leaves cancels all of it, so an abandoned
     * request is never sent again.
     */
    private Mono<Void> toOwner(ServerWebExchange exchange, WebFilterChain chain, ConnectionKey connection, Peer owner, byte[] body) {
        return work.atOwner(connection, owner, peer -> relay.forwardToOwner(exchange, peer, HeldBody.bytes(exchange, body), WHAT),
                        Mono.defer(() -> HeldBody.here(exchange, chain, body)))
                .onErrorResume(OwnerLeftException.class, left -> relay.unreachable(exchange.getResponse(), left.peer(), WHAT, left.how()));
    }

    /** Who asks, as the authentication filter found: a personal connection is the caller's own. */
    private static Principal caller(ServerWebExchange exchange) {
        return exchange.getAttributeOrDefault(Principals.ATTRIBUTE, Principal.DAEMON);
    }

    /** The connection of a health or refresh path; a path the controller will refuse stays here to be refused. */
    private static Optional<ConnectionKey> connection(Map<String, String> path, Principal caller) {
        try {
            return Optional.of(Inputs.connectionKey(path.get("owner"), path.get("integration"), path.get("name"), caller));
        }
        catch (RuntimeException invalid) {
            return Optional.empty();
        }
    }

    /** The connection of {@code {"address": "tools.<integration>.<owner>.<connection>.<tool>"}}; empty for anything else. */
    private Optional<ConnectionKey> calledConnection(byte[] body, Principal caller) {
        try {
            JsonNode address = json.readTree(body).path("address");
            return address.isString() ? ToolAddress.of(address.asString()).map(parsed -> parsed.connection(caller)) : Optional.empty();
        }
        catch (RuntimeException notJson) {
            return Optional.empty();
        }
    }
}
