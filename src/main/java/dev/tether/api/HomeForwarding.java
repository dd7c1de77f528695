package dev.tether.api;

import java.util.Optional;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import reactor.core.publisher.Mono;

import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.ReplicaIds;

/**
 * What one replica holds in memory, reached through any replica: a paused execution ({@code GET
 * /api/executions/{id}}, {@code …/resume}; the web UI's approval page and the CLI ask for it) and an agent's MCP
 * session ({@code /mcp} and {@code /mcp/tools} by their {@code Mcp-Session-Id}, the legacy {@code /messages} by its
 * {@code sessionId}). Their ids name the replica that made them ({@link ReplicaIds}); a request for one another live
 * replica holds is passed to it ({@link PeerExchange}), an event stream included, so an agent behind a round-robin
 * load balancer keeps talking to its session and resumes its executions on their live context wherever its requests
 * land. A paused execution is also in the store: when its replica is gone, or provably did not take the request (it
 * refused the connection: killed, restarting), the request is served here, which rebuilds it from its journal
 * ({@code execution.Executions#resume}). A session is not: an id whose replica is gone is answered here as unknown,
 * and the agent starts a new session. On an embedded store the filter costs one boolean test.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 10)
final class HomeForwarding implements WebFilter {

    private static final PathPattern EXECUTION = PathPatternParser.defaultInstance.parse("/api/executions/{id}/{action:resume}");
    private static final PathPattern PAUSED = PathPatternParser.defaultInstance.parse("/api/executions/{id}");
    private static final PathPattern SESSION = PathPatternParser.defaultInstance.parse("/mcp/{*rest}");
    private static final PathPattern LEGACY = PathPatternParser.defaultInstance.parse("/messages");
    /** MCP's streamable HTTP session header (the agent package's {@code AgentEndpoint.SESSION_HEADER}). */
    private static final String SESSION_HEADER = "Mcp-Session-Id";

    private final ConnectionOwners owners;
    private final ReplicaIds names;
    private final PeerExchange peers;

    HomeForwarding(ConnectionOwners owners, ReplicaIds names, PeerExchange peers) {
        this.owners = owners;
        this.names = names;
        this.peers = peers;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        if (!owners.shared() || PeerExchange.forwarded(request)) {
            return chain.filter(exchange);
        }
        Optional<String> execution = execution(request);
        if (execution.isPresent()) {
            return names.elsewhere(execution.get()).flatMap(owners::peer)
                    .map(home -> HeldBody.read(exchange, peers, body -> peers.forwardToOwner(exchange, home,
                                    HeldBody.bytes(exchange, body), "paused execution " + execution.get())
                            .onErrorResume(OwnerLeftException.class, left -> HeldBody.here(exchange, chain, body))))
                    .orElseGet(() -> chain.filter(exchange));
        }
        return session(request)
                .flatMap(id -> names.elsewhere(id).flatMap(owners::peer)
                        .map(home -> peers.forward(exchange, home, request.getBody(), id)))
                .orElseGet(() -> chain.filter(exchange));
    }

    /** The id of the paused execution {@code request} is for, if it is for one. */
    private static Optional<String> execution(ServerHttpRequest request) {
        var path = request.getPath().pathWithinApplication();
        return Optional.ofNullable(Optional.ofNullable(EXECUTION.matchAndExtract(path)).orElseGet(() -> PAUSED.matchAndExtract(path)))
                .map(match -> match.getUriVariables().get("id"));
    }

    /** The id of the agent session {@code request} is for, if it is for one. */
    private static Optional<String> session(ServerHttpRequest request) {
        var path = request.getPath().pathWithinApplication();
        if (SESSION.matches(path)) {
            return Optional.ofNullable(request.getHeaders().getFirst(SESSION_HEADER));
        }
        if (LEGACY.matches(path)) {
            return Optional.ofNullable(request.getQueryParams().getFirst("sessionId"));
        }
        return Optional.empty();
    }
}
