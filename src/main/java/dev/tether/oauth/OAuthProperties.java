package dev.tether.oauth;

import java.time.Duration;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

import dev.tether.daemon.PropertyChecks;

/**
 * OAuth for remote MCP servers.
 *
 * @param webBaseUrl      the origin the browser reaches Tether on, for the redirect URI
 *                        ({@code <webBaseUrl>/api/oauth/callback}); default {@code EXECUTOR_WEB_BASE_URL}, else the
 *                        origin of the request that starts the flow
 * @param sessionTtl      how long an authorization started and not completed stays redeemable; default 15 min
 *                        (Executor's)
 * @param resultTtl       how long the outcome of a browser flow waits for {@code GET /api/oauth/await/{state}};
 *                        default 10 min (Executor's)
 * @param timeout         bound of every request to an authorization server or metadata endpoint; default 10 s
 * @param maxResponseSize largest answer read from one; default 256 KB
 * @param refreshSkew     how long before its expiry an access token is refreshed; default 60 s
 * @param publicBaseUrl   the {@code https:} URL authorization servers reach this daemon on: Tether serves its client
 *                        metadata document at {@code <publicBaseUrl>/api/oauth/client-metadata.json} and goes by that
 *                        URL as {@code client_id} where a server takes one; default none (dynamic registration only)
 */
@ConfigurationProperties("tether.oauth")
public record OAuthProperties(@Nullable String webBaseUrl, Duration sessionTtl, Duration resultTtl, Duration timeout,
        DataSize maxResponseSize, Duration refreshSkew, @Nullable String publicBaseUrl) {

    public OAuthProperties(@Nullable String webBaseUrl, @Nullable Duration sessionTtl, @Nullable Duration resultTtl,
            @Nullable Duration timeout, @Nullable DataSize maxResponseSize, @Nullable Duration refreshSkew,
            @Nullable String publicBaseUrl) {
        webBaseUrl = webBaseUrl == null || webBaseUrl.isBlank() ? System.getenv("EXECUTOR_WEB_BASE_URL") : webBaseUrl;
        webBaseUrl = webBaseUrl == null || webBaseUrl.isBlank() ? null : webBaseUrl.strip().replaceAll("/+$", "");
        sessionTtl = PropertyChecks.positive("tether.oauth.session-ttl", sessionTtl, Duration.ofMinutes(15));
        resultTtl = PropertyChecks.positive("tether.oauth.result-ttl", resultTtl, Duration.ofMinutes(10));
        timeout = PropertyChecks.positive("tether.oauth.timeout", timeout, Duration.ofSeconds(10));
        maxResponseSize = maxResponseSize == null ? DataSize.ofKilobytes(256) : maxResponseSize;
        if (maxResponseSize.toBytes() < 1024 || maxResponseSize.toBytes() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("tether.oauth.max-response-size must be between 1KB and 2GB, was " + maxResponseSize);
        }
        refreshSkew = PropertyChecks.notNegative("tether.oauth.refresh-skew", refreshSkew, Duration.ofSeconds(60));
        publicBaseUrl = publicBaseUrl == null || publicBaseUrl.isBlank() ? null : checkPublicBase(publicBaseUrl.strip().replaceAll("/+$", ""));
        this.webBaseUrl = webBaseUrl;
        this.sessionTtl = sessionTtl;
        this.resultTtl = resultTtl;
        this.timeout = timeout;
        this.maxResponseSize = maxResponseSize;
        this.refreshSkew = refreshSkew;
        this.publicBaseUrl = publicBaseUrl;
    }

    /**
     * The draft requires an {@code https} client id with a path and without query or fragment; a server fetches it,
     * so it must also be absolute. Checked at start, so that a typo is not found at the first sign-in.
     */
    private static String checkPublicBase(String url) {
        java.net.URI uri;
        try {
            uri = new java.net.URI(url);
        }
        catch (java.net.URISyntaxException ex) {
            throw new IllegalArgumentException("tether.oauth.public-base-url is not a URL: " + ex.getReason());
        }
        if (!"https".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null || uri.getRawQuery() != null
                || uri.getRawFragment() != null || uri.getRawUserInfo() != null) {
            throw new IllegalArgumentException("tether.oauth.public-base-url must be an https: URL without user, query or fragment"
                    + " (authorization servers fetch Tether's client metadata document from it, and the draft requires https), was "
                    + uri.getScheme() + "://" + uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort())
                    + (uri.getRawPath() == null ? "" : uri.getRawPath()));
        }
        return url;
    }

    /** The configured public base URL, if any. */
    public Optional<String> publicBase() {
        return Optional.ofNullable(publicBaseUrl);
    }

    /** The configured origin for redirect URIs, if any. */
    public Optional<String> webBase() {
        return Optional.ofNullable(webBaseUrl);
    }

    public static OAuthProperties defaults() {
        return new OAuthProperties(null, null, null, null, null, null, null);
    }
}
