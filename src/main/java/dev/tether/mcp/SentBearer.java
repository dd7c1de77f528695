package dev.tether.mcp;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import reactor.core.publisher.Mono;

/**
 * A remote session's bearer token, remembering the one it last sent: a server that refuses that token before its
 * recorded expiry (revoked, rotated) makes the session ask its source for a renewed one with that very token, so
 * that however many requests were refused at once, the grant is renewed once ({@link BearerToken#renewed}).
 */
final class SentBearer {

    private final Optional<BearerToken> source;
    private final AtomicReference<String> lastSent = new AtomicReference<>();

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

    /** Renews the token the server refused; true when there is one, so the refused request may go once more. */
    Mono<Boolean> renew() {
        return source.map(tokens -> Mono.defer(() -> {
            String refused = lastSent.get();
            return refused == null ? tokens.token() : tokens.renewed(refused);
        }).thenReturn(true)).orElse(Mono.just(false));
    }
}
