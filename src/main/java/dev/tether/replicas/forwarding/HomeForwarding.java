package dev.tether.replicas.forwarding;

import java.util.Optional;

import io.modelcontextprotocol.spec.HttpHeaders;
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
 * replica holds is passed to it ({@link PeerRelay}), an event stream included, so an agent behind a round-robin
 * load balancer keeps talking to its session and resumes its executions on their live context wherever its requests
 * land. When that replica is gone, or provably did not take the request (it refused the connection: killed,
 * restarting), the request is served here: a paused execution is in the store too, and is shown and resumed from its
 * journal ({@code execution.Executions#resume}); a session is not, and is answered here as unknown, after which the
 * agent starts a new one. Bodies are read whole (bounded) to be sent twice at most. On an embedded store the filter
 * costs one boolean test.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 10)
final class HomeForwarding implements WebFilter {

    private static final PathPattern EXECUTION = PathPatternParser.defaultInstance.parse("/api/executions/{id}/{action:resume}");
    private static final PathPattern PAUSED = PathPatternParser.defaultInstance.parse("/api/executions/{id}");
    private static final PathPattern SESSION = PathPatternParser.defaultInstance.parse("/mcp/{*rest}");
    private static final PathPattern LEGACY = PathPatternParser.defaultInstance.parse("/messages");

    private final ConnectionOwners owners;
    private final ReplicaIds names;
    private final PeerRelay relay;
    private final HeldBody bodies;

    HomeForwarding(ConnectionOwners owners, ReplicaIds names, PeerRelay relay, HeldBody bodies) {
        this.owners = owners;
        this.names = names;
        this.relay = relay;
        this.bodies = bodies;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        if (!owners.shared() || PeerExchange.forwarded(exchange)) {
            return chain.filter(exchange);
        }
        Optional<String> id = execution(request).or(() -> session(request));
        return id.flatMap(names::elsewhere).flatMap(owners::peer)
                .map(home -> bodies.read(exchange, body -> relay.forwardToOwner(exchange, home, HeldBody.bytes(exchange, body),
                                id.get())
                        // It refused the connection: not listening (killed, restarting), so it holds nothing any more. A
                        // paused execution is rebuilt here from the store; a session is answered here as unknown, and its
                        // agent starts a new one at once instead of waiting out the lease.
                        .onErrorResume(OwnerLeftException.class, left -> HeldBody.here(exchange, chain, body))))
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
            return Optional.ofNullable(request.getHeaders().getFirst(HttpHeaders.MCP_SESSION_ID));
        }
        if (LEGACY.matches(path)) {
            return Optional.ofNullable(request.getQueryParams().getFirst("sessionId"));
        }
        return Optional.empty();
    }
}
