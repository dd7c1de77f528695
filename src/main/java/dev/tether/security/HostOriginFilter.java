package dev.tether.security;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Keeps web pages out: a page that rebinds its own name to 127.0.0.1 reaches the daemon with a foreign {@code Host},
 * and a page that calls the daemon from its own origin sends a foreign {@code Origin} (the MCP specification asks
 * servers to refuse those with 403). Runs before the token check, so the token-free routes ({@code /api/health},
 * {@code /api/docs}, {@code /actuator/health}) are covered too, on every port the daemon serves.
 * <p>
 * The {@code Host} is checked for connections that arrive over loopback: that is where a rebound name lands, and where
 * the only legitimate names are loopback ones (plus {@code tether.api.allowed-hosts} for a local proxy). On an address
 * the operator exposed on purpose, clients use names the daemon cannot know; there the token guards. A request without
 * {@code Origin} (the CLI, curl, an MCP client outside a browser) is not a browser's and passes, and so does a request
 * a peer replica proved it sent ({@link AuthenticatedPeer}): it carries the name in the peer's lease (by default the
 * host name, which often resolves to loopback), and no browser can make one.
 */
@Component
@Order(HostOriginFilter.ORDER)
public final class HostOriginFilter implements WebFilter {

    /**
     * Before the authentication (the users package): a refused page learns nothing, not even whether its token guess was
     * right; after the filter that proves a request came from a peer ({@link AuthenticatedPeer}), which runs first, and the
     * server's admission of requests (the server package), which bounds refused ones too.
     */
    public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 2;

    private static final Pattern IPV4_LOOPBACK = Pattern.compile("127\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");
    private static final int SHOWN = 100;

    private final List<String> allowedHosts;
    private final List<String> allowedOrigins;
    private final JsonMapper json;

    HostOriginFilter(ApiProperties properties, JsonMapper json) {
        this.allowedHosts = properties.allowedHosts();
        this.allowedOrigins = properties.allowedOrigins();
        this.json = json;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (AuthenticatedPeer.of(exchange).isPresent()) {
            return chain.filter(exchange);
        }
        ServerHttpRequest request = exchange.getRequest();
        for (String origin : request.getHeaders().getOrDefault(HttpHeaders.ORIGIN, List.of())) {
            if (!originAllowed(origin)) {
                return refuse(exchange, "OriginNotAllowedError", "origin '" + shown(origin)
                        + "' is not allowed: only loopback origins and those in tether.api.allowed-origins are");
            }
        }
        if (overLoopback(request.getLocalAddress())) {
            for (String host : request.getHeaders().getOrDefault(HttpHeaders.HOST, List.of())) {
                if (!hostAllowed(host)) {
                    return refuse(exchange, "HostNotAllowedError", "host '" + shown(host)
                            + "' is not allowed: only loopback names and those in tether.api.allowed-hosts are");
                }
            }
        }
        return chain.filter(exchange);
    }

    /** Unknown counts as loopback: the stricter check. */
    private static boolean overLoopback(@Nullable InetSocketAddress local) {
        return local == null || local.getAddress() == null || local.getAddress().isLoopbackAddress();
    }

    private boolean hostAllowed(String header) {
        String host = hostPart(header.strip().toLowerCase(Locale.ROOT));
        return host != null && (loopback(host) || allowedHosts.contains(host));
    }

    private boolean originAllowed(String header) {
        String origin = header.strip().toLowerCase(Locale.ROOT);
        URI uri = parseOrigin(origin);
        return uri != null && (loopback(uri.getHost()) || allowedOrigins.contains(origin));
    }

    /** {@code name}, {@code name:port}, {@code [v6]} or {@code [v6]:port} without the port; null when malformed. */
    private static @Nullable String hostPart(String host) {
        int end = host.startsWith("[") ? host.indexOf(']') + 1 : host.indexOf(':');
        if (end == 0) {
            return null;
        }
        if (end < 0 || end == host.length()) {
            return host.isEmpty() ? null : host;
        }
        String port = host.substring(end);
        return port.matches(":\\d{1,5}") ? host.substring(0, end) : null;
    }

    /** {@code localhost}, {@code [::1]} or an IPv4 address in 127.0.0.0/8: names nobody else can point somewhere. */
    private static boolean loopback(String host) {
        if (host == null) {
            return false;
        }
        if (host.equals("localhost") || host.equals("[::1]")) {
            return true;
        }
        Matcher ipv4 = IPV4_LOOPBACK.matcher(host);
        if (!ipv4.matches()) {
            return false;
        }
        for (int group = 1; group <= 3; group++) {
            if (Integer.parseInt(ipv4.group(group)) > 255) {
                return false;
            }
        }
        return true;
    }

    /**
     * An origin as browsers send it, {@code http(s)://host[:port]} and nothing else; null for anything else, {@code
     * null} (sandboxed frames, files) included.
     */
    public static @Nullable URI parseOrigin(String origin) {
        try {
            URI uri = new URI(origin);
            boolean web = "http".equals(uri.getScheme()) || "https".equals(uri.getScheme());
            boolean bare = uri.getRawUserInfo() == null && (uri.getRawPath() == null || uri.getRawPath().isEmpty())
                    && uri.getRawQuery() == null && uri.getRawFragment() == null;
            return web && bare && uri.getHost() != null ? uri : null;
        }
        catch (URISyntaxException ex) {
            return null;
        }
    }

    private Mono<Void> refuse(ServerWebExchange exchange, String tag, String message) {
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatus.FORBIDDEN);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        Map<String, String> error = new LinkedHashMap<>();
        error.put("_tag", tag);
        error.put("message", message);
        byte[] body = json.writeValueAsBytes(error);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    /** The value as sent, cut short: it is the caller's own text, but a response need not carry kilobytes of it. */
    private static String shown(String value) {
        return value.length() <= SHOWN ? value : value.substring(0, SHOWN) + "…";
    }
}
