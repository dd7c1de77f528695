package dev.tether.api;

import java.net.URI;
import java.util.function.Supplier;

import org.springframework.web.server.ServerWebExchange;

/** The redirect URI an OAuth route sends: the caller's own when it gives one, else Tether's callback. */
final class OAuthRedirect {

    private OAuthRedirect() {
    }

    /** The caller's redirect URI when it gives one; else Tether's. */
    static String choose(String requested, Supplier<String> ours) {
        return requested == null || requested.isBlank() ? ours.get() : requested;
    }

    /** The origin the request came to, where Tether's callback is unless a web base URL is configured. */
    static String origin(ServerWebExchange exchange) {
        URI uri = exchange.getRequest().getURI();
        return uri.getScheme() + "://" + uri.getRawAuthority();
    }
}
