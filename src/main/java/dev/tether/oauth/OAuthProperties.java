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
 */
@ConfigurationProperties("tether.oauth")
public record OAuthProperties(@Nullable String webBaseUrl, Duration sessionTtl, Duration resultTtl, Duration timeout,
        DataSize maxResponseSize, Duration refreshSkew) {

    public OAuthProperties {
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
    }

    /** The configured origin for redirect URIs, if any. */
    public Optional<String> webBase() {
        return Optional.ofNullable(webBaseUrl);
    }

    public static OAuthProperties defaults() {
        return new OAuthProperties(null, null, null, null, null, null);
    }
}
