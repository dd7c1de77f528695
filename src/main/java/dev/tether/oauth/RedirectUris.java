package dev.tether.oauth;

import java.net.URI;

import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/**
 * Where the authorization server sends the browser back to: {@code /api/oauth/callback} on the configured web base
 * URL, else on Tether's own origin; or the caller's own, when it names one. Both the flows and dynamic registration
 * (which registers this URI) need it.
 */
@Component
public final class RedirectUris {

    private final OAuthProperties properties;
    private final LocalOrigin localOrigin;

    RedirectUris(OAuthProperties properties, LocalOrigin localOrigin) {
        this.properties = properties;
        this.localOrigin = localOrigin;
    }

    /**
     * The redirect URI a flow started by an HTTP request sends: the caller's own when it gives one, else Tether's
     * callback on the origin {@code requestUri} came to, unless a web base URL is configured.
     */
    public String forRequest(@Nullable String requested, URI requestUri) {
        return requested != null && !requested.isBlank() ? requested : ours(requestUri.getScheme() + "://" + requestUri.getRawAuthority());
    }

    /** The redirect URI a flow started without a request (from code) sends: the caller's own, else this daemon's origin. */
    public String forDaemon(@Nullable String requested) {
        return requested != null && !requested.isBlank() ? requested
                : ours(localOrigin.get().orElseThrow(() -> new IllegalStateException("the API server is not bound yet")));
    }

    private String ours(String origin) {
        return properties.webBase().orElse(origin) + "/api/oauth/callback";
    }
}
