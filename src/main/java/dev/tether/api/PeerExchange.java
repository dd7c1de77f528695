package dev.tether.api;

import java.net.URI;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.netty.channel.ChannelOption;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.core.env.Environment;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.util.unit.DataSize;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.ConnectionOwners.Peer;
import dev.tether.replicas.ReplicaProperties;
import dev.tether.security.AuthToken;

/**
 * Passes a request to another replica as it came (method, path, query, end-to-end headers, body) and streams that
 * replica's answer back as it goes (status, headers, body, an event stream included). The request carries
 * {@value #FORWARDED} (the sender's instance id) and the replicas' shared token; whoever receives it serves it, so a
 * request is passed on at most once. A client that leaves cancels the exchange, which closes its connection, so the
 * peer's pipeline is cancelled as if the client had left it directly. A peer that does not accept the connection
 * within {@code tether.replicas.forward-connect-timeout}, or refuses the token, is a 503 {@code ReplicaUnreachableError}.
 */
@Component
final class PeerExchange implements DisposableBean {

    /** Marks a request one replica passed to another; its value is the sender's instance id. */
    static final String FORWARDED = "X-Tether-Forwarded-By";

    /** Hop-by-hop headers, which describe one connection and are passed on neither way. */
    private static final Set<String> HOP_BY_HOP = Set.of("connection", "keep-alive", "transfer-encoding", "te", "trailer",
            "upgrade", "proxy-authorization", "proxy-authenticate");
    /** Request headers the exchange sets itself. */
    private static final Set<String> SET_HERE = Set.of("host", "authorization", "content-length", FORWARDED.toLowerCase(Locale.ROOT));

    private static final McpJsonMapper MCP_JSON = McpJsonDefaults.getMapper();

    /** The largest tool answer an execution's call at a peer reads: 32 MiB. */
    private static final int MAX_TOOL_ANSWER = 32 * 1024 * 1024;

    private final ConnectionOwners owners;
    private final AuthToken token;
    private final JsonMapper json;
    private final int maxBody;
    private final ConnectionProvider connections;
    private final WebClient client;
    private final Counter answered;
    private final Counter unreachable;

    PeerExchange(ConnectionOwners owners, ReplicaProperties properties, AuthToken token, JsonMapper json, Environment environment,
            MeterRegistry registry) {
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
                // A tool's answer read whole for an execution's call (callTool): as large as a local child's may be,
                // not the 256 KiB WebClient reads by default. Relayed answers stream and are not bounded here.
                .codecs(codecs -> codecs.defaultCodecs().maxInMemorySize(MAX_TOOL_ANSWER))
                .build();
        this.answered = forwarded(registry, "answered");
        this.unreachable = forwarded(registry, "unreachable");
    }

    private static Counter forwarded(MeterRegistry registry, String outcome) {
        return Counter.builder("tether.replicas.forwarded").tag("outcome", outcome)
                .description("requests passed to the replica that owns their connection or holds their execution or session")
                .register(registry);
    }

    /** Whether {@code request} was passed here by a peer, and is to be served here whatever this replica thinks. */
    static boolean forwarded(ServerHttpRequest request) {
        return request.getHeaders().containsHeader(FORWARDED);
    }

    /** How much of a body a route may read to decide where it goes. */
    int maxBody() {
        return maxBody;
    }

    /** Sends {@code exchange}'s request, with {@code body}, to {@code peer}, which holds {@code what}, and relays the answer. */
    Mono<Void> forward(ServerWebExchange exchange, Peer peer, Flux<DataBuffer> body, String what) {
        ServerHttpRequest request = exchange.getRequest();
        ServerHttpResponse response = exchange.getResponse();
        String query = request.getURI().getRawQuery();
        URI target = URI.create("http://" + peer.address() + request.getURI().getRawPath() + (query == null ? "" : "?" + query));
        return client.method(request.getMethod()).uri(target)
                .headers(headers -> {
                    request.getHeaders().forEach((name, values) -> {
                        String lower = name.toLowerCase(Locale.ROOT);
                        if (!HOP_BY_HOP.contains(lower) && !SET_HERE.contains(lower)) {
                            headers.put(name, values);
                        }
                    });
                    headers.setBearerAuth(token.bearer());
                    headers.set(FORWARDED, owners.instance());
                })
                .body(BodyInserters.fromDataBuffers(body))
                .exchangeToMono(answer -> relay(answer, response, peer, what))
                .onErrorResume(WebClientRequestException.class, failed -> {
                    unreachable.increment();
                    return refuse(response, HttpStatus.SERVICE_UNAVAILABLE, "ReplicaUnreachableError", "replica "
                            + peer.instance() + " at " + peer.address() + ", which holds " + what + ", did not answer ("
                            + failed.getMostSpecificCause().getClass().getSimpleName()
                            + "); it moves once that replica's lease runs out, try again then");
                });
    }

    /**
     * Calls the tool at {@code address} on {@code peer} as {@code POST /api/tools/call} there, marked forwarded so that
     * the peer serves it itself. A caller that leaves cancels the exchange, which closes its connection, and the peer's
     * call is cancelled with it. A peer that answers anything but 200 fails the call with {@link PeerCallException}.
     */
    Mono<CallToolResult> callTool(Peer peer, String address, Map<String, Object> arguments) {
        return client.post().uri(URI.create("http://" + peer.address() + "/api/tools/call"))
                .headers(headers -> {
                    headers.setBearerAuth(token.bearer());
                    headers.set(FORWARDED, owners.instance());
                })
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(json.writeValueAsBytes(Map.of("address", address, "args", arguments)))
                .exchangeToMono(answer -> answer.bodyToMono(String.class).defaultIfEmpty("").flatMap(text -> {
                    int status = answer.statusCode().value();
                    (status == HttpStatus.UNAUTHORIZED.value() ? unreachable : answered).increment();
                    return status == HttpStatus.OK.value() ? Mono.fromCallable(() -> MCP_JSON.readValue(text, CallToolResult.class))
                            : Mono.error(new PeerCallException(peer, "the connection of " + address, status, text));
                }))
                .doOnError(WebClientRequestException.class, failed -> unreachable.increment());
    }

    /**
     * Posts to {@code path} on {@code peer}, which holds {@code what}, with no body, marked forwarded so that the peer
     * serves it itself, and emits the answer's body. A caller that leaves cancels the exchange, which closes its
     * connection. A peer that answers anything but 200 fails it with {@link PeerCallException}.
     */
    Mono<String> post(Peer peer, String path, String what) {
        return client.post().uri(URI.create("http://" + peer.address() + path))
                .headers(headers -> {
                    headers.setBearerAuth(token.bearer());
                    headers.set(FORWARDED, owners.instance());
                })
                .exchangeToMono(answer -> answer.bodyToMono(String.class).defaultIfEmpty("").flatMap(text -> {
                    int status = answer.statusCode().value();
                    (status == HttpStatus.UNAUTHORIZED.value() ? unreachable : answered).increment();
                    return status == HttpStatus.OK.value() ? Mono.just(text)
                            : Mono.error(new PeerCallException(peer, what, status, text));
                }))
                .doOnError(WebClientRequestException.class, failed -> unreachable.increment());
    }

    private Mono<Void> relay(ClientResponse answer, ServerHttpResponse response, Peer peer, String what) {
        if (answer.statusCode().value() == HttpStatus.UNAUTHORIZED.value()) {
            unreachable.increment();
            return answer.releaseBody().then(refuse(response, HttpStatus.SERVICE_UNAVAILABLE, "ReplicaUnreachableError",
                    "replica " + peer.instance() + " at " + peer.address() + ", which holds " + what + ", refused this "
                            + "replica's token: every replica must be given the same tether.api.token"));
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

    /** Answers {@code status} with Executor's error body: {@code {_tag, message}}. */
    Mono<Void> refuse(ServerHttpResponse response, HttpStatus status, String tag, String message) {
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
