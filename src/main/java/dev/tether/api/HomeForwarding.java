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
 * {@code sessionId}). Their ids name the replica that holds them ({@link ReplicaIds}); a request for one another live
 * replica holds is passed to it ({@link PeerExchange}), an event stream included, so an agent behind a round-robin
 * load balancer keeps talking to its session and resumes its executions wherever its requests land. An id whose
 * replica is gone is served here, which answers it as unknown. On an embedded store the filter costs one boolean test.
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
        if (!owners.shared() || PeerExchange.forwarded(exchange)) {
            return chain.filter(exchange);
        }
        return held(request)
                .flatMap(id -> names.elsewhere(id).flatMap(owners::peer)
                        .map(home -> peers.forward(exchange, home, request.getBody(), id)))
                .orElseGet(() -> chain.filter(exchange));
    }

    /** The id of the execution or session {@code request} is for, if it is for one. */
    private static Optional<String> held(ServerHttpRequest request) {
        var path = request.getPath().pathWithinApplication();
        PathPattern.PathMatchInfo execution = Optional.ofNullable(EXECUTION.matchAndExtract(path))
                .orElseGet(() -> PAUSED.matchAndExtract(path));
        if (execution != null) {
            return Optional.of(execution.getUriVariables().get("id"));
        }
        if (SESSION.matches(path)) {
            return Optional.ofNullable(request.getHeaders().getFirst(SESSION_HEADER));
        }
        if (LEGACY.matches(path)) {
            return Optional.ofNullable(request.getQueryParams().getFirst("sessionId"));
        }
        return Optional.empty();
    }
}
