package dev.tether.mcp;

import reactor.core.publisher.Mono;

/**
 * Where a remote server's {@code Authorization: Bearer} token comes from, asked once for every HTTP request the
 * session makes: a token that expires is refreshed by its source, and the session keeps going.
 */
@FunctionalInterface
public interface BearerToken {

    /**
     * The access token to send now. Fails with {@link AuthorizationExpiredException} when the grant cannot be
     * renewed without the user.
     */
    Mono<String> token();

    /**
     * A token to use instead of {@code rejected}, which the server refused before its recorded expiry: renewed once
     * however many callers were refused the same token (callers that come after the renewal get the new one). The
     * same failures as {@link #token()}. A source that cannot renew answers {@link #token()}.
     */
    default Mono<String> renewed(String rejected) {
        return token();
    }

    /**
     * The server refused a request for want of {@code challenged} scope (space-separated, maybe empty): the scope the
     * next authorization asks for, which keeps what the token had. A source that cannot authorize anew answers it as given.
     */
    default String needsScope(String challenged) {
        return challenged;
    }
}
