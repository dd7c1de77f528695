package dev.tether.replicas.forwarding;

import java.util.function.Function;

import org.springframework.core.env.Environment;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.stereotype.Component;
import org.springframework.util.unit.DataSize;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.http.BodyBytes;

/**
 * A request's body read whole (bounded), for a filter that may send it twice: to a peer that then provably did not
 * take it, and after that to another peer or to this replica's own handlers.
 */
@Component
final class HeldBody {

    /** How much of a body a route may read to decide where it goes: what the controllers would read. */
    private final int maxBody;
    private final ErrorBodies errors;

    HeldBody(Environment environment, ErrorBodies errors) {
        this.maxBody = (int) environment.getProperty("spring.codec.max-in-memory-size", DataSize.class, DataSize.ofKilobytes(256))
                .toBytes();
        this.errors = errors;
    }

    /** Reads the body (at most {@code spring.codec.max-in-memory-size}, else a 413) and hands it to {@code route}. */
    Mono<Void> read(ServerWebExchange exchange, Function<byte[], Mono<Void>> route) {
        return BodyBytes.read(exchange.getRequest().getBody(), maxBody)
                .defaultIfEmpty(new byte[0])
                .flatMap(route)
                .onErrorResume(DataBufferLimitException.class, tooLarge -> errors.refuse(exchange.getResponse(),
                        HttpStatus.CONTENT_TOO_LARGE, "InvalidInputError", "the request body is larger than " + maxBody + " bytes"));
    }

    /** Serves the request here, with the body read before. */
    static Mono<Void> here(ServerWebExchange exchange, WebFilterChain chain, byte[] body) {
        return chain.filter(exchange.mutate().request(new ServerHttpRequestDecorator(exchange.getRequest()) {
            @Override
            public Flux<DataBuffer> getBody() {
                return bytes(exchange, body);
            }
        }).build());
    }

    /** The body read before, as a request body again (once per subscription); none at all for an empty one (a GET). */
    static Flux<DataBuffer> bytes(ServerWebExchange exchange, byte[] body) {
        return body.length == 0 ? Flux.empty() : Flux.defer(() -> Flux.just(exchange.getResponse().bufferFactory().wrap(body)));
    }
}
