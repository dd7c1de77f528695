package dev.tether.api;

import java.net.URI;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelOption;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.util.unit.DataSize;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.api.input.Inputs;
import dev.tether.calls.ToolAddress;
import dev.tether.http.BodyBytes;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.ConnectionOwners.Peer;
import dev.tether.replicas.ReplicaProperties;
import dev.tether.security.AuthToken;
import dev.tether.store.ConnectionKey;

/**
 * Replicas on one store keep one warm session per connection, on its owner ({@link ConnectionOwners}): a health
 * check, a catalog refresh or a tool call for a connection another replica owns is passed to that replica as it came
 * (method, path, query, body) and its answer streamed back as it goes (status, headers, body). Decided here, before
 * the controllers, so that the services below never learn that another replica exists: they serve what reaches them.
 * <p>
 * A forwarded request carries {@value #FORWARDED} (the sender's instance id) and this replica's token; whoever
 * receives it serves it locally, so two replicas that briefly disagree about the owner cannot bounce a request. A
 * client that leaves cancels the forwarded exchange, which closes its connection, so the owner's pipeline is
 * cancelled as if the client had left it directly. An owner that does not accept the connection within
 * {@code tether.replicas.forward-connect-timeout} gets a 503 {@code ReplicaUnreachableError}; once its lease runs out,
 * ownership moves. On an embedded store nothing is forwarded and the filter costs one boolean test.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 10)
final class OwnerForwarding implements WebFilter, DisposableBean {

    /** Marks a request one replica passed to another; its value is the sender's instance id. */
    static final String FORWARDED = "X-Tether-Forwarded-By";

    private static final PathPattern CONNECTION_ROUTE =
            PathPatternParser.defaultInstance.parse("/api/connections/{owner}/{integration}/{name}/{action:health|refresh}");
    private static final PathPattern CALL_ROUTE = PathPatternParser.defaultInstance.parse("/api/tools/call");
    /** Hop-by-hop headers, which describe one connection and are not passed on. */
    private static final Set<String> HOP_BY_HOP = Set.of("connection", "keep-alive", "transfer-encoding", "te", "trailer",
            "upgrade", "proxy-authorization", "proxy-authenticate");

    private final ConnectionOwners owners;
    private final AuthToken token;
    private final JsonMapper json;
    private final int maxBody;
    private final ConnectionProvider connections;
    private final WebClient client;
    private final Counter answered;
    private final Counter unreachable;

    OwnerForwarding(ConnectionOwners owners, ReplicaProperties properties, AuthToken token, JsonMapper json,
            Environment environment, MeterRegistry registry) {
        this.owners = owners;
        this.token = token;
        this.json = json;
        this.maxBody = (int) environment.getProperty("spring.codec.max-in-memory-size", DataSize.class, DataSize.ofKilobytes(256))
                .toBytes();
        // Its own pool: a storm of abandoned requests closes connections, and must not wait behind the source clients'.
        this.connections = ConnectionProvider.builder("tether-forward").maxConnections(1024).pendingAcquireMaxCount(-1)
                .pendingAcquireTimeout(properties.forwardConnectTimeout()).build();
        this.client = WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(HttpClient.create(connections)
                        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) properties.forwardConnectTimeout().toMillis())))
                .build();
        this.answered = forwarded(registry, "answered");
        this.unreachable = forwarded(registry, "unreachable");
    }

    private static Counter forwarded(MeterRegistry registry, String outcome) {
        return Counter.builder("tether.replicas.forwarded").tag("outcome", outcome)
                .description("requests passed to the replica that owns their connection").register(registry);
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        if (!owners.shared() || request.getMethod() != HttpMethod.POST || request.getHeaders().containsHeader(FORWARDED)) {
            return chain.filter(exchange);
        }
        PathPattern.PathMatchInfo connectionRoute = CONNECTION_ROUTE.matchAndExtract(request.getPath().pathWithinApplication());
        if (connectionRoute != null) {
            Optional<Peer> owner = connection(connectionRoute.getUriVariables()).flatMap(owners::remoteOwner);
            return owner.isPresent() ? forward(exchange, owner.get(), request.getBody()) : chain.filter(exchange);
        }
        if (!CALL_ROUTE.matches(request.getPath().pathWithinApplication())) {
            return chain.filter(exchange);
        }
        // The connection is named in the body: read it once, then send or serve those very bytes.
        return BodyBytes.read(request.getBody(), maxBody)
                .defaultIfEmpty(new byte[0])
                .flatMap(body -> {
                    Optional<Peer> owner = calledConnection(body).flatMap(owners::remoteOwner);
                    Flux<DataBuffer> again = Flux.defer(() -> Flux.just(exchange.getResponse().bufferFactory().wrap(body)));
                    return owner.isPresent() ? forward(exchange, owner.get(), again)
                            : chain.filter(exchange.mutate().request(new ServerHttpRequestDecorator(request) {
                                @Override
                                public Flux<DataBuffer> getBody() {
                                    return again;
                                }
                            }).build());
                })
                .onErrorResume(DataBufferLimitException.class, tooLarge -> refuse(exchange.getResponse(),
                        HttpStatus.CONTENT_TOO_LARGE, "InvalidInputError", "the request body is larger than " + maxBody + " bytes"));
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

    private Mono<Void> forward(ServerWebExchange exchange, Peer owner, Flux<DataBuffer> body) {
        ServerHttpRequest request = exchange.getRequest();
        ServerHttpResponse response = exchange.getResponse();
        String query = request.getURI().getRawQuery();
        URI target = URI.create("http://" + owner.address() + request.getURI().getRawPath() + (query == null ? "" : "?" + query));
        return client.post().uri(target)
                .headers(headers -> {
                    copy(request.getHeaders(), headers, HttpHeaders.CONTENT_TYPE, HttpHeaders.ACCEPT);
                    headers.setBearerAuth(token.bearer());
                    headers.set(FORWARDED, owners.instance());
                })
                .body(BodyInserters.fromDataBuffers(body))
                .exchangeToMono(answer -> relay(answer, response, owner))
                .onErrorResume(WebClientRequestException.class, failed -> {
                    unreachable.increment();
                    return refuse(response, HttpStatus.SERVICE_UNAVAILABLE, "ReplicaUnreachableError", "replica "
                            + owner.instance() + " at " + owner.address() + ", which owns this connection, did not answer ("
                            + failed.getMostSpecificCause().getClass().getSimpleName()
                            + "); ownership moves once its lease runs out, try again then");
                });
    }

    private Mono<Void> relay(ClientResponse answer, ServerHttpResponse response, Peer owner) {
        if (answer.statusCode().value() == HttpStatus.UNAUTHORIZED.value()) {
            unreachable.increment();
            return answer.releaseBody().then(refuse(response, HttpStatus.SERVICE_UNAVAILABLE, "ReplicaUnreachableError",
                    "replica " + owner.instance() + " at " + owner.address() + " refused this replica's token: every replica "
                            + "must be given the same tether.api.token"));
        }
        answered.increment();
        response.setStatusCode(answer.statusCode());
        answer.headers().asHttpHeaders().forEach((name, values) -> {
            if (!HOP_BY_HOP.contains(name.toLowerCase(Locale.ROOT))) {
                response.getHeaders().put(name, values);
            }
        });
        return response.writeWith(answer.bodyToFlux(DataBuffer.class));
    }

    private static void copy(HttpHeaders from, HttpHeaders to, String... names) {
        for (String name : names) {
            if (from.containsHeader(name)) {
                to.put(name, from.get(name));
            }
        }
    }

    private Mono<Void> refuse(ServerHttpResponse response, HttpStatus status, String tag, String message) {
        response.setStatusCode(status);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        byte[] body = json.writeValueAsBytes(Map.of("_tag", tag, "message", message));
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    @Override
    public void destroy() {
        connections.dispose();
    }
}
