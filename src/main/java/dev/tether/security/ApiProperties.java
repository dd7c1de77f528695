package dev.tether.security;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tether.daemon.PropertyChecks;

/**
 * The HTTP API.
 *
 * @param token          a fixed bearer token; by default one is generated on first start and kept in
 *                       {@code <dataDir>/server-control/auth.json}
 * @param allowedHosts   {@code Host} names (without port) accepted over loopback besides the loopback ones: a
 *                       reverse proxy or sidecar that forwards with the public name; none by default
 * @param allowedOrigins browser origins ({@code scheme://host[:port]}) accepted besides loopback ones; none by default
 * @param streamKeepAlive how often an open event stream ({@code GET /mcp}, {@code GET /sse}, a streamed answer)
 *                       that has nothing to say sends a comment, so that proxies do not cut it as idle; default 15 s
 * @param password       an HTTP Basic password accepted beside the token on every route (any user name, as Executor),
 *                       which then guards the web UI too: the desktop app's {@code EXECUTOR_AUTH_PASSWORD}; none by
 *                       default
 * @param requireAuth    whether a credential is asked at all; default true. False is the desktop app with its
 *                       "require auth" off, as Executor's sidecar without a password: nothing is asked, and the API
 *                       must listen on loopback only (the {@code Host}/{@code Origin} checks still apply)
 */
@ConfigurationProperties("tether.api")
public record ApiProperties(String token, List<String> allowedHosts, List<String> allowedOrigins, Duration streamKeepAlive,
        @Nullable String password, Boolean requireAuth) {

    public ApiProperties {
        allowedHosts = allowedHosts == null ? List.of()
                : allowedHosts.stream().map(ApiProperties::host).toList();
        allowedOrigins = allowedOrigins == null ? List.of()
                : allowedOrigins.stream().map(ApiProperties::origin).toList();
        streamKeepAlive = PropertyChecks.positive("tether.api.stream-keep-alive", streamKeepAlive, Duration.ofSeconds(15));
        password = password == null || password.strip().isEmpty() ? null : password.strip(); // Executor trims it too
        requireAuth = requireAuth == null || requireAuth;
    }

    /** Neither the token nor the password: a record prints its components, and this one may be logged. */
    @Override
    public String toString() {
        return "ApiProperties[token=" + (token == null ? "generated" : "(set)") + ", allowedHosts=" + allowedHosts
                + ", allowedOrigins=" + allowedOrigins + ", streamKeepAlive=" + streamKeepAlive + ", password="
                + (password == null ? "none" : "(set)") + ", requireAuth=" + requireAuth + "]";
    }

    private static String host(String entry) {
        String host = entry == null ? "" : entry.strip().toLowerCase(Locale.ROOT);
        if (host.isEmpty() || host.contains("/") || (host.contains(":") && !host.startsWith("["))) {
            throw new IllegalArgumentException(
                    "tether.api.allowed-hosts takes host names without scheme or port, was '" + entry + "'");
        }
        return host;
    }

    private static String origin(String entry) {
        String origin = entry == null ? "" : entry.strip().toLowerCase(Locale.ROOT);
        if (origin.endsWith("/")) {
            origin = origin.substring(0, origin.length() - 1);
        }
        URI uri = HostOriginFilter.parseOrigin(origin);
        if (uri == null) {
            throw new IllegalArgumentException(
                    "tether.api.allowed-origins takes origins as scheme://host[:port], was '" + entry + "'");
        }
        return origin;
    }
}
