package dev.tether.api;

import java.util.Map;
import java.util.Optional;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.api.input.Inputs;
import dev.tether.calls.ToolAddress;
import dev.tether.http.BodyBytes;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.ConnectionOwners.Peer;
import dev.tether.store.ConnectionKey;

/**
 * Replicas on one store keep one warm session per connection, on its owner ({@link ConnectionOwners}): a health
 * check, a catalog refresh or a tool call for a connection another replica owns is passed to that replica
 * ({@link PeerExchange}) before the controllers, so that the services below never learn that another replica
 * exists: they serve what reaches them. Once the owner's lease runs out, ownership moves. On an embedded store
 * nothing is forwarded and the filter costs one boolean test.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 10)
final class OwnerForwarding implements WebFilter {

    private static final PathPattern CONNECTION_ROUTE =
            PathPatternParser.defaultInstance.parse("/api/connections/{owner}/{integration}/{name}/{action:health|refresh}");
    private static final PathPattern CALL_ROUTE = PathPatternParser.defaultInstance.parse("/api/tools/call");
    private static final String WHAT = "this connection's session";

    private final ConnectionOwners owners;
    private final PeerExchange peers;
    private final JsonMapper json;

    OwnerForwarding(ConnectionOwners owners, PeerExchange peers, JsonMapper json) {
        this.owners = owners;
        this.peers = peers;
        this.json = json;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        if (!owners.shared() || request.getMethod() != HttpMethod.POST || PeerExchange.forwarded(request)) {
            return chain.filter(exchange);
        }
        PathPattern.PathMatchInfo connectionRoute = CONNECTION_ROUTE.matchAndExtract(request.getPath().pathWithinApplication());
        if (connectionRoute != null) {
            Optional<Peer> owner = connection(connectionRoute.getUriVariables()).flatMap(owners::remoteOwner);
            return owner.isPresent() ? peers.forward(exchange, owner.get(), request.getBody(), WHAT) : chain.filter(exchange);
        }
        if (!CALL_ROUTE.matches(request.getPath().pathWithinApplication())) {
            return chain.filter(exchange);
        }
        // The connection is named in the body: read it once, then send or serve those very bytes.
        return BodyBytes.read(request.getBody(), peers.maxBody())
                .defaultIfEmpty(new byte[0])
                .flatMap(body -> {
                    Optional<Peer> owner = calledConnection(body).flatMap(owners::remoteOwner);
                    Flux<DataBuffer> again = Flux.defer(() -> Flux.just(exchange.getResponse().bufferFactory().wrap(body)));
                    return owner.isPresent() ? peers.forward(exchange, owner.get(), again, WHAT)
                            : chain.filter(exchange.mutate().request(new ServerHttpRequestDecorator(request) {
                                @Override
                                public Flux<DataBuffer> getBody() {
                                    return again;
                                }
                            }).build());
                })
                .onErrorResume(DataBufferLimitException.class, tooLarge -> peers.refuse(exchange.getResponse(),
                        HttpStatus.CONTENT_TOO_LARGE, "InvalidInputError", "the request body is larger than " + peers.maxBody() + " bytes"));
    }

    /** The connection of a health or refresh path; a path the controller will refuse stays here to be refused. */
    private static Optional<ConnectionKey> connection(Map<String, String> path) {
        try {
            return Optional.of(Inputs.connectionKey(path.get("owner"), path.get("integration"), path.get("name")));
        }
        catch (RuntimeException invalid) {
            return Optional.empty();
        }
    }

    /** The connection of {@code {"address": "tools.<integration>.<owner>.<connection>.<tool>"}}; empty for anything else. */
    private Optional<ConnectionKey> calledConnection(byte[] body) {
        try {
            JsonNode address = json.readTree(body).path("address");
            return address.isString() ? ToolAddress.of(address.asString()).map(ToolAddress::connection) : Optional.empty();
        }
        catch (RuntimeException notJson) {
            return Optional.empty();
        }
    }
}
