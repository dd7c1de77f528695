package dev.tether.replicas.forwarding;

import java.net.URI;
import java.util.Locale;
import java.util.Set;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.identity.Principals;
import dev.tether.replicas.ConnectionOwners;
import dev.tether.replicas.ConnectionOwners.Peer;

/**
 * The reverse proxy between replicas: passes a request to another replica as it came (method, path, query, end-to-end
 * headers, body) over the peers' client ({@link PeerExchange}, which marks and signs it in place of its client's
 * credentials) and streams that replica's answer back as it goes (status, headers, body, an event stream included).
 * Whoever receives it serves it, so a request is passed on at most once. A client that leaves cancels the exchange,
 * which closes its connection, so the peer's pipeline is cancelled as if the client had left it directly. A peer that
 * does not accept the connection within {@code tether.replicas.forward-connect-timeout}, or refuses the credential, is
 * a 503 {@code ReplicaUnreachableError}; a connection's owner that refuses the connection or says it is draining
 * ({@value PeerExchange#DRAINING}) is an {@link OwnerLeftException} for the sender, which may then go to the new owner.
 */
@Component
final class PeerRelay {

    /** Hop-by-hop headers, which describe one connection and are passed on neither way. */
    private static final Set<String> HOP_BY_HOP = Set.of("connection", "keep-alive", "transfer-encoding", "te", "trailer",
            "upgrade", "proxy-authorization", "proxy-authenticate");
    /**
     * Request headers the exchange sets itself, and the client's credentials: this replica checked them, and the peer
     * needs none but the sender's (and the principal it names, {@value Principals#HEADER}).
     */
    private static final Set<String> SET_HERE = Set.of("host", "authorization", "x-executor-token", "cookie", "content-length",
            PeerExchange.FORWARDED.toLowerCase(Locale.ROOT), PeerExchange.STORE_POSITION.toLowerCase(Locale.ROOT),
            PeerExchange.CREDENTIAL.toLowerCase(Locale.ROOT), Principals.HEADER.toLowerCase(Locale.ROOT),
            // The trace context, which this replica took in (W3C, B3) and sends on as its own hop's child, in W3C.
            "traceparent", "tracestate", "baggage", "b3", "x-b3-traceid", "x-b3-spanid", "x-b3-parentspanid", "x-b3-sampled",
            "x-b3-flags");

    private final ConnectionOwners owners;
    private final PeerExchange peers;
    private final ErrorBodies errors;

    PeerRelay(ConnectionOwners owners, PeerExchange peers, ErrorBodies errors) {
        this.owners = owners;
        this.peers = peers;
        this.errors = errors;
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
        return peers.client().method(request.getMethod()).uri(target)
                .headers(headers -> request.getHeaders().forEach((name, values) -> {
                    String lower = name.toLowerCase(Locale.ROOT);
                    if (!HOP_BY_HOP.contains(lower) && !SET_HERE.contains(lower)) {
                        headers.put(name, values);
                    }
                }))
                .body(BodyInserters.fromDataBuffers(body))
                .exchangeToMono(answer -> PeerExchange.draining(answer) ? peers.left(answer, peer) : relay(answer, response, peer, what))
                .onErrorResume(WebClientRequestException.class, failed -> peers.notConnected(failed, peer)
                        .map(Mono::<Void>error)
                        .orElseGet(() -> unreachable(response, peer, what, "did not answer ("
                                + failed.getMostSpecificCause().getClass().getSimpleName() + ")")));
    }

    /** Answers 503 {@code ReplicaUnreachableError}: {@code peer}, which holds {@code what}, {@code how} (did not answer, …). */
    Mono<Void> unreachable(ServerHttpResponse response, Peer peer, String what, String how) {
        peers.countUnreachable();
        return errors.refuse(response, HttpStatus.SERVICE_UNAVAILABLE, "ReplicaUnreachableError", "replica " + peer.instance() + " at "
                + peer.address() + ", which holds " + what + ", " + how + "; it moves once that replica's lease runs out, try again then");
    }

    /**
     * Refuses a request a peer forwarded here as to a connection's owner, which this replica no longer is: it is
     * draining. Nothing of the request was done, so the peer may send it to the new owner. Its body is read (and
     * dropped) before the answer: a draining replica closes the connection after it, and closed under a body still
     * being sent, the peer's client can fail with "prematurely closed BEFORE response" instead of reading the refusal,
     * and its own client gets a 503 where the new owner would have served it (RollingRestartIT did).
     */
    Mono<Void> refuseDraining(ServerWebExchange exchange) {
        ServerHttpResponse response = exchange.getResponse();
        response.getHeaders().set(PeerExchange.DRAINING, owners.instance());
        return exchange.getRequest().getBody().doOnNext(DataBufferUtils::release)
                .then(Mono.defer(() -> errors.refuse(response, HttpStatus.SERVICE_UNAVAILABLE, "ReplicaDrainingError",
                        "replica " + owners.instance() + " is stopping and owns no connection any more: read the leases"
                                + " again and ask the new owner")));
    }

    private Mono<Void> relay(ClientResponse answer, ServerHttpResponse response, Peer peer, String what) {
        if (answer.statusCode().value() == HttpStatus.UNAUTHORIZED.value()) {
            peers.countUnreachable();
            return answer.bodyToMono(String.class).defaultIfEmpty("").flatMap(text -> errors.refuse(response,
                    HttpStatus.SERVICE_UNAVAILABLE, "ReplicaUnreachableError", "replica " + peer.instance() + " at "
                            + peer.address() + ", which holds " + what + ", refused this replica's peer credential: "
                            + errors.message(text)));
        }
        peers.countAnswer(answer.statusCode().value());
        response.setStatusCode(answer.statusCode());
        answer.headers().asHttpHeaders().forEach((name, values) -> {
            if (!HOP_BY_HOP.contains(name.toLowerCase(Locale.ROOT))) {
                response.getHeaders().put(name, values);
            }
        });
        return response.writeWith(answer.bodyToFlux(DataBuffer.class));
    }
}
