package dev.tether.mcp;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import reactor.core.publisher.Mono;

/**
 * A remote session's bearer token, remembering the one it last sent. A server that refuses the token before its
 * recorded expiry (revoked, rotated) makes the session renew it, once however many requests it refused: a request
 * notes the renewal its token came from ({@link #generation()}) before it is sent, and one refused under a renewal
 * that has since been replaced goes again with the newer token instead of renewing the newer token too.
 */
final class SentBearer {

    /** The renewal the session's tokens come from now; generation 0 is the token the session started with. */
    private record Renewal(long generation, Mono<Boolean> done) {
    }

    private final Optional<BearerToken> source;
    private final AtomicReference<String> lastSent = new AtomicReference<>();
    private final AtomicReference<Renewal> current = new AtomicReference<>(new Renewal(0, Mono.just(true)));

    SentBearer(Optional<BearerToken> source) {
        this.source = source;
    }

    /** For a server without an OAuth grant: nothing to send, nothing to renew. */
    static SentBearer none() {
        return new SentBearer(Optional.empty());
    }

    boolean present() {
        return source.isPresent();
    }

    /** The token to send now, remembered as the one sent. */
    Mono<String> token() {
        return source.map(tokens -> tokens.token().doOnNext(lastSent::set)).orElse(Mono.empty());
    }

    /** What the next authorization must ask for, now that the server wants {@code challenged} scope too. */
    String needsScope(String challenged) {
        return source.map(tokens -> tokens.needsScope(challenged)).orElse(challenged);
    }

    /** Which renewal a request about to be sent gets its token from. */
    long generation() {
        return Objects.requireNonNull(current.get()).generation();
    }

    /**
     * A request sent under {@code sentUnder} was refused: true once the token is renewed (by this call, or by the
     * one that renewed it since), so the request may go once more; false when there is no token to renew.
     */
    Mono<Boolean> renew(long sentUnder) {
        if (source.isEmpty()) {
            return Mono.just(false);
        }
        BearerToken tokens = source.get();
        Renewal now = Objects.requireNonNull(current.get());
        if (now.generation() > sentUnder) {
            return now.done();
        }
        // Cached: the requests waiting on it share one renewal, and one that leaves does not cancel it for the rest.
        Renewal next = new Renewal(now.generation() + 1, Mono.defer(() -> {
            String refused = lastSent.get();
            return refused == null ? tokens.token() : tokens.renewed(refused);
        }).thenReturn(true).cache());
        return current.compareAndSet(now, next) ? next.done() : Objects.requireNonNull(current.get()).done();
    }
}
