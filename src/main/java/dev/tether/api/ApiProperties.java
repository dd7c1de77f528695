package dev.tether.api;

import java.net.URI;
import java.util.List;
import java.util.Locale;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The HTTP API.
 *
 * @param token          a fixed bearer token; by default one is generated on first start and kept in
 *                       {@code <dataDir>/server-control/auth.json}
 * @param allowedHosts   {@code Host} names (without port) accepted over loopback besides the loopback ones: a
 *                       reverse proxy or sidecar that forwards with the public name; none by default
 * @param allowedOrigins browser origins ({@code scheme://host[:port]}) accepted besides loopback ones; none by default
 */
@ConfigurationProperties("tether.api")
public record ApiProperties(String token, List<String> allowedHosts, List<String> allowedOrigins) {

    public ApiProperties {
        allowedHosts = allowedHosts == null ? List.of()
                : allowedHosts.stream().map(ApiProperties::host).toList();
        allowedOrigins = allowedOrigins == null ? List.of()
                : allowedOrigins.stream().map(ApiProperties::origin).toList();
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
