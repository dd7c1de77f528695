package dev.tether.server;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.daemon.HealthProbes;
import dev.tether.security.AuthenticatedPeer;

/**
 * Admits a request, or sheds it at once with an answer that says when to come back: what the server takes is bounded
 * per request, not per connection, so an idle or slow crowd holds no place a request needs. A request is counted from
 * its head to its answer's end (an event stream as long as it is open):
 * <ul>
 * <li>beyond {@code tether.server.max-requests} in flight, or while Netty's buffers take more than
 * {@code tether.server.max-buffer-memory} ({@link BufferMemory}), it is answered {@code 503 ServerBusyError} with
 * {@code Retry-After}: the server is full, and a load balancer may try another replica;</li>
 * <li>beyond {@code tether.server.max-requests-per-client} from its client, {@code 429 TooManyRequestsError} with
 * {@code Retry-After}: that client is over its share, the server is not full, and no load balancer should take this
 * replica for a failing one.</li>
 * </ul>
 * A client is the connection's remote address, or, when that is one of {@code tether.server.trusted-proxies}, the
 * address its {@code X-Forwarded-For} (else {@code Forwarded}) names: the right-most one that is not itself a trusted
 * proxy, which is the one the nearest proxy saw. Behind a load balancer that is not trusted, every client is the load
 * balancer. A loopback client is this host's user (the desktop app, its CLI, local agents, which one person drives and
 * nothing tells apart) and is counted in the overall bound only; so is a peer replica, whose forwarded requests were
 * each admitted as their own client's at the replica that received them. Runs after a peer's proof is checked and
 * before the browser guards, so that a flood of refused requests is bounded too. Health probes pass uncounted.
 */
@Component
@Order(Admission.ORDER)
final class Admission implements WebFilter {

    /** Right after the peers' filter (the highest precedence), before the browser guards and the token check. */
    static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 1;
    /** How long a shed request is told to wait: long enough for a burst to pass, short enough not to strand anyone. */
    static final Duration RETRY_AFTER = Duration.ofSeconds(1);

    private final ServerLimitsProperties limits;
    private final BufferMemory memory;
    private final JsonMapper json;
    private final HealthProbes probes;
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Requests in flight per counted client; a client leaves the map with its last request. */
    private final Map<String, Integer> perClient = new ConcurrentHashMap<>();
    private final ThrottledLog sheds = new ThrottledLog(LoggerFactory.getLogger(Admission.class));
    private final Counter shedFull;
    private final Counter shedClient;
    private final Counter shedMemory;

    Admission(ServerLimitsProperties limits, BufferMemory memory, JsonMapper json, MeterRegistry registry, HealthProbes probes) {
        this.limits = limits;
        this.probes = probes;
        this.memory = memory;
        this.json = json;
        Gauge.builder("tether.server.requests", inFlight, AtomicInteger::get)
                .description("HTTP requests in flight, from their head to their answer's end").register(registry);
        Gauge.builder("tether.server.clients", perClient, Map::size)
                .description("clients with a request in flight that are counted apart (not loopback, not peers)").register(registry);
        this.shedFull = shed(registry, "requests");
        this.shedClient = shed(registry, "client");
        this.shedMemory = shed(registry, "memory");
    }

    private static Counter shed(MeterRegistry registry, String reason) {
        return Counter.builder("tether.server.shed").tag("reason", reason)
                .description("requests answered 503 (requests, memory) or 429 (client) at once, not served").register(registry);
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        // A probe is cheap, and one refused under load would have Kubernetes restart a pod that is only busy, or a
        // load balancer take every busy replica out at once.
        if (probes.matches(exchange.getRequest())) {
            return chain.filter(exchange);
        }
        return Mono.using(() -> admit(exchange),
                ticket -> ticket.refusal() == null ? chain.filter(exchange) : shed(exchange.getResponse(), ticket.refusal()),
                this::release);
    }

    /** A request's place, or why it has none; released once whatever happens to the request. */
    private record Ticket(@Nullable String client, @Nullable Refusal refusal) {
    }

    /** An answer in place of the request's own. */
    private record Refusal(HttpStatus status, String tag, String message) {
    }

    private Ticket admit(ServerWebExchange exchange) {
        String client = client(exchange);
        if (memory.over()) {
            shedMemory.increment();
            sheds.warn("shed a request from {}: Netty's buffers take more than {} (tether.server.max-buffer-memory)",
                    remote(exchange), limits.maxBufferMemory());
            return new Ticket(null, new Refusal(HttpStatus.SERVICE_UNAVAILABLE, "ServerBusyError", "the server is short of "
                    + "buffer memory (tether.server.max-buffer-memory): try again in " + RETRY_AFTER.toSeconds() + " s"));
        }
        if (inFlight.incrementAndGet() > limits.maxRequests()) {
            inFlight.decrementAndGet();
            shedFull.increment();
            sheds.warn("shed a request from {}: {} requests in flight (tether.server.max-requests)", remote(exchange),
                    limits.maxRequests());
            return new Ticket(null, new Refusal(HttpStatus.SERVICE_UNAVAILABLE, "ServerBusyError", "the server has "
                    + limits.maxRequests() + " requests in flight (tether.server.max-requests): try again in "
                    + RETRY_AFTER.toSeconds() + " s"));
        }
        if (client != null && perClient.merge(client, 1, Integer::sum) > limits.maxRequestsPerClient()) {
            leave(client);
            inFlight.decrementAndGet();
            shedClient.increment();
            sheds.warn("shed a request from client {}: {} requests of its own in flight (tether.server.max-requests-per-client)",
                    client, limits.maxRequestsPerClient());
            return new Ticket(null, new Refusal(HttpStatus.TOO_MANY_REQUESTS, "TooManyRequestsError", "this client has "
                    + limits.maxRequestsPerClient() + " requests in flight (tether.server.max-requests-per-client): try again"
                    + " in " + RETRY_AFTER.toSeconds() + " s, or once one of them is answered"));
        }
        return new Ticket(client, null);
    }

    private void release(Ticket ticket) {
        if (ticket.refusal() != null) {
            return;
        }
        if (ticket.client() != null) {
            leave(ticket.client());
        }
        inFlight.decrementAndGet();
    }

    private void leave(String client) {
        perClient.computeIfPresent(client, (address, count) -> count == 1 ? null : count - 1);
    }

    private Mono<Void> shed(ServerHttpResponse response, Refusal refusal) {
        response.setStatusCode(refusal.status());
        response.getHeaders().set(HttpHeaders.RETRY_AFTER, Long.toString(RETRY_AFTER.toSeconds()));
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        Map<String, String> body = new LinkedHashMap<>();
        body.put("_tag", refusal.tag());
        body.put("message", refusal.message());
        return response.writeWith(Mono.just(response.bufferFactory().wrap(json.writeValueAsBytes(body))));
    }

    /** The client counted apart for {@code exchange}; null for one counted only overall (loopback, a peer, unknown). */
    private @Nullable String client(ServerWebExchange exchange) {
        if (AuthenticatedPeer.of(exchange).isPresent()) {
            return null;
        }
        InetSocketAddress remote = exchange.getRequest().getRemoteAddress();
        if (remote == null || remote.getAddress() == null) {
            return null;
        }
        InetAddress address = remote.getAddress();
        Optional<String> named = trusted(address) ? forwardedClient(exchange.getRequest()) : Optional.empty();
        if (named.isPresent()) {
            return AddressRange.literal(named.get()).map(InetAddress::isLoopbackAddress).orElse(false) ? null : named.get();
        }
        return address.isLoopbackAddress() ? null : address.getHostAddress();
    }

    private boolean trusted(InetAddress address) {
        for (AddressRange proxy : limits.trustedProxies()) {
            if (proxy.contains(address)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The client a trusted proxy names: of the addresses in {@code X-Forwarded-For} (else {@code Forwarded}'s
     * {@code for=}), the right-most that is not a trusted proxy, the left-most when all are. An entry that is no
     * address ({@code unknown}, an obfuscated name) is taken as it is: the proxy wrote it.
     */
    private Optional<String> forwardedClient(ServerHttpRequest request) {
        List<String> hops = forwardedFor(request.getHeaders());
        for (int i = hops.size() - 1; i >= 0; i--) {
            Optional<InetAddress> hop = AddressRange.literal(hops.get(i));
            if (hop.isEmpty() || !trusted(hop.get()) || i == 0) {
                return Optional.of(hop.map(InetAddress::getHostAddress).orElse(hops.get(i)));
            }
        }
        return Optional.empty();
    }

    private static List<String> forwardedFor(HttpHeaders headers) {
        List<String> hops = new ArrayList<>();
        for (String line : headers.getOrDefault("X-Forwarded-For", List.of())) {
            for (String hop : line.split(",")) {
                if (!hop.isBlank()) {
                    hops.add(node(hop.strip()));
                }
            }
        }
        if (!hops.isEmpty()) {
            return hops;
        }
        for (String line : headers.getOrDefault("Forwarded", List.of())) {
            for (String element : line.split(",")) {
                for (String pair : element.split(";")) {
                    String[] nameValue = pair.strip().split("=", 2);
                    if (nameValue.length == 2 && nameValue[0].strip().toLowerCase(Locale.ROOT).equals("for")) {
                        hops.add(node(nameValue[1].strip()));
                    }
                }
            }
        }
        return hops;
    }

    /** A hop without quotes and port, as some proxies write them: {@code "[2001:db8::1]:4711"} is {@code 2001:db8::1}. */
    private static String node(String value) {
        String node = value.length() > 1 && value.startsWith("\"") && value.endsWith("\"") ? value.substring(1, value.length() - 1) : value;
        if (node.startsWith("[")) {
            int end = node.indexOf(']');
            return end > 0 ? node.substring(1, end) : node;
        }
        int colon = node.indexOf(':');
        return colon > 0 && node.indexOf(':', colon + 1) < 0 ? node.substring(0, colon) : node;
    }

    private static String remote(ServerWebExchange exchange) {
        InetSocketAddress remote = exchange.getRequest().getRemoteAddress();
        return remote == null ? "an unknown address" : remote.toString();
    }
}
