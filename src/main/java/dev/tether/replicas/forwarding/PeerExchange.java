package dev.tether.replicas.forwarding;

import java.net.ConnectException;
import java.net.URI;
import java.util.Objects;
import java.util.Optional;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import io.netty.channel.ChannelOption;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.ConnectionOwners.Peer;
import dev.tether.replicas.ReplicaProperties;
import dev.tether.replicas.PeerCredentials;
import dev.tether.replicas.PeerCredentials.SignedRequest;
import dev.tether.security.AuthenticatedPeer;
import dev.tether.store.ConnectionKey;
import dev.tether.store.changes.StorePosition;

/**
 * The peers' client: every request one replica sends another goes through it, on its own connection pool, and carries
 * {@value #FORWARDED} (the sender's instance id), {@value #STORE_POSITION} and {@value #CREDENTIAL}, which proves that a
 * peer sent it ({@link PeerCredentials}), in place of any client's credentials. It tells a peer that provably did not
 * take a request (refused the connection, or said it is draining, {@value #DRAINING}: an {@link OwnerLeftException})
 * from one that failed later, counts what peers answered, and sends the simple requests (an action, a JSON post, the
 * alive probe). Relaying a client's request is {@link PeerRelay}'s; a tool call at a peer {@link PeerToolCalls}'s.
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

    /** The largest tool answer an execution's call at a peer ({@link PeerToolCalls}) reads: 32 MiB. */
    private static final int MAX_TOOL_ANSWER = 32 * 1024 * 1024;

    private final ConnectionOwners owners;
    private final StorePosition store;
    private final PeerCredentials credentials;
    private final JsonMapper json;
    private final ConnectionProvider connections;
    private final WebClient client;
    private final Counter answered;
    private final Counter unreachable;
    private final Counter ownerLeft;

    PeerExchange(ConnectionOwners owners, StorePosition store, ReplicaProperties properties, PeerCredentials credentials, JsonMapper json,
            MeterRegistry registry, ObservationRegistry observations) {
        this.owners = owners;
        this.store = store;
        this.credentials = credentials;
        this.json = json;
        // Its own pool: a storm of abandoned requests closes connections, and must not wait behind the source clients'.
        this.connections = ConnectionProvider.builder("tether-forward").maxConnections(1024).pendingAcquireMaxCount(-1)
                .pendingAcquireTimeout(properties.forwardConnectTimeout()).build();
        this.client = WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(HttpClient.create(connections)
                        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) properties.forwardConnectTimeout().toMillis())))
                // A tool's answer read whole for an execution's call (PeerToolCalls): as large as a local child's may be,
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

    /** The client every request to a peer goes out on: marked, signed and traced as it is sent. */
    WebClient client() {
        return client;
    }

    /** Counts a peer's answer: one that refused this replica's credential (401) as unreachable, any other as answered. */
    void countAnswer(int status) {
        (status == HttpStatus.UNAUTHORIZED.value() ? unreachable : answered).increment();
    }

    /** Counts a peer that did not answer, or refused this replica's credential. */
    void countUnreachable() {
        unreachable.increment();
    }

    /**
     * Whether {@code exchange} was passed here by a peer, proven by its credential ({@link PeerAuthentication}), and is
     * to be served here whatever this replica thinks.
     */
    public static boolean forwarded(ServerWebExchange exchange) {
        return AuthenticatedPeer.of(exchange).isPresent();
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
    static SignedRequest signed(HttpMethod method, URI target, String sender, String position, @Nullable String principal) {
        String path = target.getRawPath() == null || target.getRawPath().isEmpty() ? "/" : target.getRawPath();
        String query = target.getRawQuery();
        return new SignedRequest(method.name(), query == null ? path : path + "?" + query, sender, position,
                Objects.requireNonNullElse(principal, ""));
    }

    /**
     * An {@link OwnerLeftException} when {@code failed} never reached the peer: the connection was refused or not
     * accepted in time (a request is written only on a connection that is up). Anything later is no proof.
     */
    Optional<OwnerLeftException> notConnected(WebClientRequestException failed, Peer peer) {
        if (!(failed.getMostSpecificCause() instanceof ConnectException refused)) {
            return Optional.empty();
        }
        ownerLeft.increment();
        return Optional.of(new OwnerLeftException(peer, "refused the connection (" + refused.getClass().getSimpleName() + ")"));
    }

    /** Whether {@code answer} is a draining owner's refusal ({@link PeerRelay#refuseDraining}). */
    static boolean draining(ClientResponse answer) {
        return answer.statusCode().value() == HttpStatus.SERVICE_UNAVAILABLE.value()
                && answer.headers().asHttpHeaders().containsHeader(DRAINING);
    }

    /** A draining owner's refusal as an {@link OwnerLeftException}, its body released. */
    <T> Mono<T> left(ClientResponse answer, Peer peer) {
        ownerLeft.increment();
        return answer.releaseBody().then(Mono.error(new OwnerLeftException(peer, "is draining")));
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
                            countAnswer(status);
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
                    countAnswer(status);
                    return new PeerAnswer(status, text);
                }))
                .onErrorMap(WebClientRequestException.class, failed -> ownerLeftOr(failed, peer));
    }

    /** {@code failed} as an {@link OwnerLeftException} when it never reached {@code peer}; counted as unreachable otherwise. */
    Throwable ownerLeftOr(WebClientRequestException failed, Peer peer) {
        Optional<OwnerLeftException> left = notConnected(failed, peer);
        if (left.isEmpty()) {
            unreachable.increment();
        }
        return left.<Throwable>map(error -> error).orElse(failed);
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

    @Override
    public void destroy() {
        connections.dispose();
    }
}
