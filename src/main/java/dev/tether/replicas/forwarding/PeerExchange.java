package dev.tether.replicas.forwarding;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.URI;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.ElicitFormRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitUrlRequest;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import org.jspecify.annotations.Nullable;
import io.netty.channel.ChannelOption;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.core.env.Environment;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.util.unit.DataSize;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.mcp.ElicitationHandler;
import dev.tether.mcp.ProgressListener;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.ConnectionOwners.Peer;
import dev.tether.replicas.ReplicaProperties;
import dev.tether.replicas.PeerCredentials;
import dev.tether.replicas.PeerCredentials.SignedRequest;
import dev.tether.security.AuthenticatedPeer;
import dev.tether.store.ConnectionKey;
import dev.tether.store.StorePosition;

/**
 * Passes a request to another replica as it came (method, path, query, end-to-end headers, body) and streams that
 * replica's answer back as it goes (status, headers, body, an event stream included). The request carries
 * {@value #FORWARDED} (the sender's instance id) and {@value #CREDENTIAL}, which proves that a peer sent it
 * ({@link PeerCredentials}), in place of its client's credentials; whoever receives it serves it, so a request is passed
 * on at most once. A client that leaves cancels the exchange, which closes its connection, so the peer's pipeline is
 * cancelled as if the client had left it directly. A peer that does not accept the connection within
 * {@code tether.replicas.forward-connect-timeout}, or refuses the credential, is a 503 {@code ReplicaUnreachableError};
 * a connection's owner that refuses the connection or says it is draining ({@value #DRAINING}) is an
 * {@link OwnerLeftException} for the sender, which may then go to the new owner.
 */
@Component
public final class PeerExchange implements DisposableBean {

    /** Marks a request one replica passed to another; its value is the sender's instance id. */
    public static final String FORWARDED = "X-Tether-Forwarded-By";
    /** How far into the store's change log the sender had gone: the receiver serves the request once it has too. */
    public static final String STORE_POSITION = "X-Tether-Store-Position";

    /** Proves that a peer sent the request ({@link PeerCredentials}): signed per request with a key of the store key's. */
    public static final String CREDENTIAL = "X-Tether-Peer-Credential";

    /** Marks a draining replica's refusal of a request forwarded to it as a connection's owner; its value is its instance id. */
    static final String DRAINING = "X-Tether-Draining";

    /** Hop-by-hop headers, which describe one connection and are passed on neither way. */
    private static final Set<String> HOP_BY_HOP = Set.of("connection", "keep-alive", "transfer-encoding", "te", "trailer",
            "upgrade", "proxy-authorization", "proxy-authenticate");
    /**
     * Request headers the exchange sets itself, and the client's credentials: this replica checked them, and the peer
     * needs none but the sender's (and the principal it names, {@value Principals#HEADER}).
     */
    private static final Set<String> SET_HERE = Set.of("host", "authorization", "x-executor-token", "cookie", "content-length",
            FORWARDED.toLowerCase(Locale.ROOT), STORE_POSITION.toLowerCase(Locale.ROOT), CREDENTIAL.toLowerCase(Locale.ROOT),
            Principals.HEADER.toLowerCase(Locale.ROOT),
            // The trace context, which this replica took in (W3C, B3) and sends on as its own hop's child, in W3C.
            "traceparent", "tracestate", "baggage", "b3", "x-b3-traceid", "x-b3-spanid", "x-b3-parentspanid", "x-b3-sampled",
            "x-b3-flags");

    private static final McpJsonMapper MCP_JSON = McpJsonDefaults.getMapper();
    private static final ParameterizedTypeReference<ServerSentEvent<String>> EVENTS = new ParameterizedTypeReference<>() {
    };

    /** The largest tool answer an execution's call at a peer reads: 32 MiB. */
    private static final int MAX_TOOL_ANSWER = 32 * 1024 * 1024;

    private final ConnectionOwners owners;
    private final StorePosition store;
    private final PeerCredentials credentials;
    private final JsonMapper json;
    private final int maxBody;
    private final ConnectionProvider connections;
    private final WebClient client;
    private final Counter answered;
    private final Counter unreachable;
    private final Counter ownerLeft;

    PeerExchange(ConnectionOwners owners, StorePosition store, ReplicaProperties properties, PeerCredentials credentials, JsonMapper json,
            Environment environment, MeterRegistry registry, ObservationRegistry observations) {
        this.owners = owners;
        this.store = store;
        this.credentials = credentials;
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
                // A span for each hop, the child of the request's that it serves, whose context goes with the request
                // (traceparent): one trace spans both replicas.
                .observationRegistry(observations)
                // Every request this client sends is a peer's, signed as it is sent (each subscription, each attempt):
                // a request assembled long before it leaves (a sync queued behind others) is not stale, and none reuses
                // a nonce.
                .filter((request, next) -> Principals.current().flatMap(caller -> next.exchange(ClientRequest.from(request)
                        .headers(headers -> markForwarded(headers, request.method(), request.url(), caller)).build())))
                .build();
        this.answered = forwarded(registry, "answered");
        this.unreachable = forwarded(registry, "unreachable");
        this.ownerLeft = forwarded(registry, "owner_left");
    }

    private static Counter forwarded(MeterRegistry registry, String outcome) {
        return Counter.builder("tether.replicas.forwarded").tag("outcome", outcome)
                .description("requests passed to the replica that owns their connection or holds their execution or session")
                .register(registry);
    }

    /**
     * Whether {@code exchange} was passed here by a peer, proven by its credential ({@link PeerAuthentication}), and is
     * to be served here whatever this replica thinks.
     */
    public static boolean forwarded(ServerWebExchange exchange) {
        return AuthenticatedPeer.of(exchange).isPresent();
    }

    /**
     * Why {@code request}, marked as a peer's, is not proven to be one; empty when it is. A request marked by neither
     * header is no peer's and not asked about.
     */
    Optional<String> refusal(ServerHttpRequest request) {
        HttpHeaders headers = request.getHeaders();
        String sender = headers.getFirst(FORWARDED);
        String credential = headers.getFirst(CREDENTIAL);
        if (sender == null || credential == null) {
            return Optional.of("a request from a peer carries both " + FORWARDED + " and " + CREDENTIAL);
        }
        return credentials.refusal(credential, signed(request.getMethod(), request.getURI(), sender,
                Objects.requireNonNullElse(headers.getFirst(STORE_POSITION), ""), headers.getFirst(Principals.HEADER)));
    }

    /** Whether {@code request} says it comes from a peer, which it must then prove. */
    static boolean markedAsPeers(ServerHttpRequest request) {
        return request.getHeaders().containsHeader(FORWARDED) || request.getHeaders().containsHeader(CREDENTIAL);
    }

    /**
     * What a credential covers: the method, the raw path and query as sent, the sender and its store position, and the
     * principal the request is for ({@value Principals#HEADER}, none for the daemon's own work), which decides what the
     * receiver lets it see and do.
     */
    private static SignedRequest signed(HttpMethod method, URI target, String sender, String position, @Nullable String principal) {
        String path = target.getRawPath() == null || target.getRawPath().isEmpty() ? "/" : target.getRawPath();
        String query = target.getRawQuery();
        return new SignedRequest(method.name(), query == null ? path : path + "?" + query, sender, position,
                Objects.requireNonNullElse(principal, ""));
    }

    /** How much of a body a route may read to decide where it goes. */
    int maxBody() {
        return maxBody;
    }

    /**
     * Sends {@code exchange}'s request, with {@code body}, to {@code peer}, which owns or holds {@code what}, and relays
     * the answer; fails with {@link OwnerLeftException}, before anything is written to the response, when the peer
     * provably did not take the request, so that the caller may send it to the new owner or serve it itself.
     */
    Mono<Void> forwardToOwner(ServerWebExchange exchange, Peer peer, Flux<DataBuffer> body, String what) {
        ServerHttpRequest request = exchange.getRequest();
        ServerHttpResponse response = exchange.getResponse();
        String query = request.getURI().getRawQuery();
        URI target = URI.create("http://" + peer.address() + request.getURI().getRawPath() + (query == null ? "" : "?" + query));
        return client.method(request.getMethod()).uri(target)
                .headers(headers -> request.getHeaders().forEach((name, values) -> {
                    String lower = name.toLowerCase(Locale.ROOT);
                    if (!HOP_BY_HOP.contains(lower) && !SET_HERE.contains(lower)) {
                        headers.put(name, values);
                    }
                }))
                .body(BodyInserters.fromDataBuffers(body))
                .exchangeToMono(answer -> draining(answer) ? left(answer, peer) : relay(answer, response, peer, what))
                .onErrorResume(WebClientRequestException.class, failed -> notConnected(failed, peer)
                        .map(Mono::<Void>error)
                        .orElseGet(() -> unreachable(response, peer, what, "did not answer ("
                                + failed.getMostSpecificCause().getClass().getSimpleName() + ")")));
    }

    /** Answers 503 {@code ReplicaUnreachableError}: {@code peer}, which holds {@code what}, {@code how} (did not answer, …). */
    Mono<Void> unreachable(ServerHttpResponse response, Peer peer, String what, String how) {
        unreachable.increment();
        return refuse(response, HttpStatus.SERVICE_UNAVAILABLE, "ReplicaUnreachableError", "replica " + peer.instance() + " at "
                + peer.address() + ", which holds " + what + ", " + how + "; it moves once that replica's lease runs out, try again then");
    }

    /**
     * An {@link OwnerLeftException} when {@code failed} never reached the peer: the connection was refused or not
     * accepted in time (a request is written only on a connection that is up). Anything later is no proof.
     */
    private Optional<OwnerLeftException> notConnected(WebClientRequestException failed, Peer peer) {
        if (!(failed.getMostSpecificCause() instanceof ConnectException refused)) {
            return Optional.empty();
        }
        ownerLeft.increment();
        return Optional.of(new OwnerLeftException(peer, "refused the connection (" + refused.getClass().getSimpleName() + ")"));
    }

    /** Whether {@code answer} is a draining owner's refusal ({@link #refuseDraining}). */
    private static boolean draining(ClientResponse answer) {
        return answer.statusCode().value() == HttpStatus.SERVICE_UNAVAILABLE.value()
                && answer.headers().asHttpHeaders().containsHeader(DRAINING);
    }

    /** A draining owner's refusal as an {@link OwnerLeftException}, its body released. */
    private <T> Mono<T> left(ClientResponse answer, Peer peer) {
        ownerLeft.increment();
        return answer.releaseBody().then(Mono.error(new OwnerLeftException(peer, "is draining")));
    }

    /**
     * Refuses a request a peer forwarded here as to a connection's owner, which this replica no longer is: it is
     * draining. Nothing of the request was done, so the peer may send it to the new owner.
     */
    Mono<Void> refuseDraining(ServerHttpResponse response) {
        response.getHeaders().set(DRAINING, owners.instance());
        return refuse(response, HttpStatus.SERVICE_UNAVAILABLE, "ReplicaDrainingError", "replica " + owners.instance()
                + " is stopping and owns no connection any more: read the leases again and ask the new owner");
    }

    /**
     * Calls the tool at {@code address} on {@code peer} ({@code api.PeerCallsController}), marked forwarded so that the
     * peer serves it itself. What the call says on the way reaches this call's context as a local call's would: each
     * progress notification its {@link ProgressListener}, each server question its {@link ElicitationHandler}, whose
     * answer goes back to the peer. A caller that leaves cancels the exchange, which closes its connection, and the
     * peer's call is cancelled with it. A peer that answers anything but a result fails the call with
     * {@link PeerCallException}, one that provably did not take it (refused the connection, or is draining) with
     * {@link OwnerLeftException}.
     */
    Mono<CallToolResult> callTool(Peer peer, String address, Map<String, Object> arguments) {
        return Mono.deferContextual(context -> {
            ProgressListener progress = context.getOrDefault(ProgressListener.class, null);
            ElicitationHandler questions = ElicitationHandler.of(context);
            PeerCall call = new PeerCall(address, arguments, progress != null,
                    questions != ElicitationHandler.ACCEPT_ALL);
            return client.post().uri(URI.create("http://" + peer.address() + "/api/replicas/calls"))
                    .contentType(MediaType.APPLICATION_JSON)
                    .accept(MediaType.TEXT_EVENT_STREAM)
                    .bodyValue(json.writeValueAsBytes(call))
                    .exchangeToFlux(answer -> draining(answer) ? Flux.<ServerSentEvent<String>>from(left(answer, peer))
                            : events(answer, peer, address))
                    .flatMap(event -> switch (String.valueOf(event.event())) {
                        case "progress" -> {
                            if (progress != null) {
                                progress.onProgress(read(event.data(), ProgressNotification.class));
                            }
                            yield Mono.<CallToolResult>empty();
                        }
                        case "question" -> answer(peer, read(event.data(), PeerQuestion.class), questions).then(Mono.<CallToolResult>empty());
                        case "result" -> Mono.just(read(event.data(), CallToolResult.class));
                        case "failure" -> {
                            PeerFailure failure = read(event.data(), PeerFailure.class);
                            yield Mono.<CallToolResult>error(new PeerCallException(peer, "the connection of " + address, failure.status(),
                                    json.writeValueAsString(failure.body())));
                        }
                        default -> Mono.<CallToolResult>empty();
                    })
                    .next()
                    .switchIfEmpty(Mono.error(() -> new PeerCallException(peer, "the connection of " + address,
                            HttpStatus.OK.value(), "the answer ended without a result")));
        }).onErrorMap(WebClientRequestException.class, failed -> ownerLeftOr(failed, peer));
    }

    /**
     * Posts {@code action} of {@code connection} ({@code /api/connections/…/<action>}) to {@code peer}, which holds its
     * session, with no body, marked forwarded so that the peer serves it itself, and emits the answer's body; for the
     * caller, or when the daemon itself asks (a background sync), for the connection's user. A caller that leaves cancels
     * the exchange, which closes its connection. A peer that answers anything but 200 fails it with
     * {@link PeerCallException}.
     */
    Mono<String> post(Peer peer, ConnectionKey connection, String action) {
        String what = "the session of " + connection;
        return Principals.current().flatMap(caller -> client.post().uri(URI.create("http://" + peer.address()
                        + ConnectionPaths.of(connection, action)))
                .headers(headers -> forWhom(headers, caller.daemon() ? Principal.daemonFor(caller.tenant(), connection.subject())
                        : caller))
                .exchangeToMono(answer -> draining(answer) ? this.<String>left(answer, peer)
                        : answer.bodyToMono(String.class).defaultIfEmpty("").flatMap(text -> {
                            int status = answer.statusCode().value();
                            (status == HttpStatus.UNAUTHORIZED.value() ? unreachable : answered).increment();
                            return status == HttpStatus.OK.value() ? Mono.just(text)
                                    : Mono.error(new PeerCallException(peer, what, status, text));
                        })))
                .onErrorMap(WebClientRequestException.class, failed -> ownerLeftOr(failed, peer));
    }

    /** A peer's answer read whole: its status and body. */
    record PeerAnswer(int status, String body) {
    }

    /**
     * Posts {@code body} (JSON) to {@code path} on {@code peer}, which holds {@code what}, marked forwarded so that the
     * peer serves it itself, and emits its status and body whatever the status: the caller reads the peer's refusals
     * as the route's own. A caller that leaves cancels the exchange, which closes its connection; a peer that does not
     * take the connection fails it with {@link OwnerLeftException}.
     */
    Mono<PeerAnswer> postJson(Peer peer, String path, Object body, String what) {
        return client.post().uri(URI.create("http://" + peer.address() + path))
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(json.writeValueAsBytes(body))
                .exchangeToMono(answer -> answer.bodyToMono(String.class).defaultIfEmpty("").map(text -> {
                    int status = answer.statusCode().value();
                    (status == HttpStatus.UNAUTHORIZED.value() ? unreachable : answered).increment();
                    return new PeerAnswer(status, text);
                }))
                .onErrorMap(WebClientRequestException.class, failed -> ownerLeftOr(failed, peer));
    }

    /**
     * Sends work for {@code connection} to its owner {@code owner} ({@code send}); when that owner provably did not
     * take it (it refused the connection, or is draining), reads the leases once more and sends it to the owner they
     * name now, or runs {@code here} when that is this replica. The same owner again means it left without a word to
     * the store (killed): the failure stands until its lease runs out. A caller that leaves cancels all of it.
     */
    <T> Mono<T> atOwner(ConnectionKey connection, Peer owner, Function<Peer, Mono<T>> send, Mono<T> here) {
        return send.apply(owner).onErrorResume(OwnerLeftException.class, left -> owners.remoteOwnerAfresh(connection)
                .flatMap(next -> next.isEmpty() ? here : next.get().equals(owner) ? Mono.error(left) : send.apply(next.get())));
    }

    /** {@code failed} as an {@link OwnerLeftException} when it never reached {@code peer}; counted as unreachable otherwise. */
    private Throwable ownerLeftOr(WebClientRequestException failed, Peer peer) {
        Optional<OwnerLeftException> left = notConnected(failed, peer);
        if (left.isEmpty()) {
            unreachable.increment();
        }
        return left.<Throwable>map(error -> error).orElse(failed);
    }

    /** A question of the peer's call, as {@code api.PeerCallsController} sends it. */
    private record PeerQuestion(String id, Map<String, Object> request) {
    }

    /** A failed call at the peer: the status and body its {@code POST /api/tools/call} would have answered. */
    private record PeerFailure(int status, Object body) {
    }

    private Flux<ServerSentEvent<String>> events(ClientResponse answer, Peer peer, String address) {
        int status = answer.statusCode().value();
        (status == HttpStatus.UNAUTHORIZED.value() ? unreachable : answered).increment();
        return status == HttpStatus.OK.value() ? answer.bodyToFlux(EVENTS)
                : answer.bodyToMono(String.class).defaultIfEmpty("")
                        .flatMapMany(text -> Flux.error(new PeerCallException(peer, "the connection of " + address, status, text)));
    }

    /** Puts the peer's question to this call's user, and posts the answer back to the peer. */
    private Mono<Void> answer(Peer peer, PeerQuestion question, ElicitationHandler questions) {
        // As the MCP client reads elicitation/create: a URL to visit when its mode says so, otherwise a form.
        Class<? extends ElicitRequest> type = "url".equals(question.request().get("mode")) ? ElicitUrlRequest.class
                : ElicitFormRequest.class;
        return questions.elicit(MCP_JSON.convertValue(question.request(), type))
                .flatMap(answer -> client.post().uri(URI.create("http://" + peer.address() + "/api/replicas/answers/" + question.id()))
                        .contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(write(answer))
                        .retrieve()
                        .toBodilessEntity())
                .then();
    }

    private static <T> T read(@Nullable String data, Class<T> type) {
        try {
            return MCP_JSON.readValue(data == null ? "null" : data, type);
        }
        catch (IOException unreadable) {
            throw new UncheckedIOException(unreadable);
        }
    }

    private static String write(Object value) {
        try {
            return MCP_JSON.writeValueAsString(value);
        }
        catch (IOException unwritable) {
            throw new UncheckedIOException(unwritable);
        }
    }

    /**
     * The instance id {@code address} answers with at {@code GET /api/replicas/alive}: whether a replica whose lease ran
     * out is there, and still itself (another replica may listen at a dead one's address by now). Fails when it does not
     * answer; the caller bounds it.
     */
    Mono<String> alive(String address) {
        return client.get().uri(URI.create("http://" + address + Alive.PATH))
                .accept(MediaType.APPLICATION_JSON)
                .retrieve()
                .bodyToMono(Alive.class)
                .map(Alive::instance);
    }

    /** Names {@code principal} as whom the request is for; nothing for the daemon's own work. */
    private static void forWhom(HttpHeaders headers, Principal principal) {
        if (!principal.daemon()) {
            headers.set(Principals.HEADER, Principals.header(principal));
        }
    }

    /**
     * Marks a request to {@code target} as this replica's, signed for it alone, now, and for whom it is, which the
     * credential covers: the principal it was given ({@link #post}), else {@code caller}, the principal of the pipeline
     * that sends it, so that no route can send a request for its user as the daemon's.
     */
    private void markForwarded(HttpHeaders headers, HttpMethod method, URI target, Principal caller) {
        if (!headers.containsHeader(Principals.HEADER)) {
            forWhom(headers, caller);
        }
        String position = Long.toString(store.reached());
        headers.set(FORWARDED, owners.instance());
        headers.set(STORE_POSITION, position);
        headers.set(CREDENTIAL, credentials.sign(signed(method, target, owners.instance(), position,
                headers.getFirst(Principals.HEADER))));
    }

    /**
     * Completes once this replica has read the store as far as the peer that forwarded {@code request} had, so that
     * what the peer wrote just before (a connection, a policy) is known here; at once for a request without a position.
     */
    Mono<Void> caughtUpWith(ServerHttpRequest request) {
        String position = request.getHeaders().getFirst(STORE_POSITION);
        try {
            return position == null ? Mono.empty() : store.awaitApplied(Long.parseLong(position));
        }
        catch (NumberFormatException notANumber) {
            return Mono.empty();
        }
    }

    private Mono<Void> relay(ClientResponse answer, ServerHttpResponse response, Peer peer, String what) {
        if (answer.statusCode().value() == HttpStatus.UNAUTHORIZED.value()) {
            unreachable.increment();
            return answer.bodyToMono(String.class).defaultIfEmpty("").flatMap(text -> refuse(response,
                    HttpStatus.SERVICE_UNAVAILABLE, "ReplicaUnreachableError", "replica " + peer.instance() + " at "
                            + peer.address() + ", which holds " + what + ", refused this replica's peer credential: "
                            + message(text)));
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

    /** The {@code message} of an error body, or the body itself when it has none. */
    private String message(String body) {
        try {
            JsonNode message = json.readTree(body).path("message");
            return message.isString() ? message.asString() : body;
        }
        catch (RuntimeException notJson) {
            return body;
        }
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
