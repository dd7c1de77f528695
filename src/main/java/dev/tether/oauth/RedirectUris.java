package dev.tether.oauth;

import org.springframework.stereotype.Component;

/**
 * Where the authorization server sends the browser back to: {@code /api/oauth/callback} on the configured web base
 * URL, else on Tether's own origin. Both the flows and dynamic registration (which registers this URI) need it.
 */
@Component
public final class RedirectUris {

    private final OAuthProperties properties;
    private final LocalOrigin localOrigin;

    RedirectUris(OAuthProperties properties, LocalOrigin localOrigin) {
        this.properties = properties;
        this.localOrigin = localOrigin;
    }

    /** The redirect URI for a request that came to {@code requestOrigin}, unless a web base URL is configured. */
    public String forRequest(String requestOrigin) {
        return properties.webBase().orElse(requestOrigin) + "/api/oauth/callback";
    }

    /** The redirect URI for a flow started without a request (from code): this daemon's own origin. */
    public String forDaemon() {
        return forRequest(localOrigin.get().orElseThrow(() -> new IllegalStateException("the API server is not bound yet")));
    }
}
