package dev.tether.replicas;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.tether.daemon.HealthProbes;

/**
 * What reaches a replica while it drains ({@link GracefulDrain}), which decides when it may stop listening without a
 * load balancer answering 502 for it.
 * <ul>
 * <li>From the drain's start every response says {@code Connection: close}: a load balancer (or a peer) that keeps
 * connections to this replica alive closes each one after its answer instead of sending the next request on it. An
 * idle kept-alive connection that the replica closes when it stops listening can cross a request the balancer has just
 * sent on it, which the balancer can only answer 502: it cannot know whether the replica took it.</li>
 * <li>It notes when a request other than a health probe last arrived or was answered, so that the drain lasts until the
 * balancer has stopped sending work here ({@link #quiet}), however late its health checks notice that this replica is
 * unready. An answer counts too: a client that sends its next request once the last is answered, slowly on a busy
 * host, is still sending.</li>
 * </ul>
 * Runs first, so that it sees every request, a refused one included.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
public final class DrainTraffic implements WebFilter {

    private final HealthProbes probes;
    private final Scheduler clock;
    private volatile boolean draining;
    /** When a request other than a probe last arrived or was answered since the drain began, on {@link #clock}, in ms. */
    private volatile long lastActivity;

    @Autowired
    DrainTraffic(HealthProbes probes) {
        this(probes, Schedulers.parallel());
    }

    DrainTraffic(HealthProbes probes, Scheduler clock) {
        this.probes = probes;
        this.clock = clock;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        boolean work = !probes.matches(exchange.getRequest());
        if (work && draining) {
            lastActivity = now();
        }
        ServerHttpResponse response = exchange.getResponse();
        // Checked as the answer goes out, so that a request that arrived before the drain closes its connection too.
        // The answer counts as activity then, before its bytes leave: noted once they were written, it could be noted
        // after the client read it and sent the next request, later than it happened.
        response.beforeCommit(() -> {
            if (draining) {
                response.getHeaders().set(HttpHeaders.CONNECTION, "close");
                if (work) {
                    lastActivity = now();
                }
            }
            return Mono.empty();
        });
        return chain.filter(exchange);
    }

    /** Begins the drain: from now on connections are closed after their answer, and requests are noted. */
    void drain() {
        lastActivity = now();
        draining = true;
    }

    /**
     * Completes once {@code quiet} has passed without a request other than a health probe arriving or being answered,
     * counted from the drain's start: a balancer that still sends work here keeps the replica listening and serving.
     */
    Mono<Void> quiet(Duration quiet) {
        return Mono.defer(() -> {
            Duration left = quiet.minusMillis(now() - lastActivity);
            return left.compareTo(Duration.ZERO) > 0 ? Mono.delay(left, clock).then(quiet(quiet)) : Mono.empty();
        });
    }

    private long now() {
        return clock.now(TimeUnit.MILLISECONDS);
    }
}
