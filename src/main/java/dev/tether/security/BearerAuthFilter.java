package dev.tether.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

import dev.tether.daemon.StartupFailure;

/**
 * Every route under {@code /api} but {@code /api/health}, the agent endpoints ({@code /mcp}, and {@code /sse} with
 * {@code /messages} of the legacy transport), and Actuator's endpoints but {@code /actuator/health} when they share
 * the API's port, need the token: {@code Authorization: Bearer <token>}, or the bare token in
 * {@code x-executor-token}, as Executor takes it ({@code hasBearerToken} in {@code apps/local/src/serve-shared.ts}). On a management port of its own Actuator answers without it: that port is for
 * probes and scrapers, and the operator decides who reaches it.
 * <p>
 * With a password ({@code tether.api.password}, the desktop app's), HTTP Basic with that password (any user name, as
 * Executor checks only the password) is accepted beside the token, and the web UI's files need one of the two as
 * well. With {@code tether.api.require-auth=false} (the app's "require auth" off) nothing is asked, which is allowed on
 * loopback only, as Executor allows it. A refusal carries Executor's challenge, naming both schemes. A request a peer
 * replica proved it sent ({@link AuthenticatedPeer}) needs neither: the peer checked its client's credential.
 */
@Component
@Order(HostOriginFilter.ORDER + 1)
public final class BearerAuthFilter implements WebFilter {

    /** The auth schemes; RFC 7235 makes their names case-insensitive, so {@code bearer} and {@code BEARER} count too. */
    private static final String SCHEME = "Bearer ";
    private static final String BASIC = "Basic ";
    /** Executor's other place for the token: the header's whole value, compared as it is (no scheme, no trimming). */
    public static final String TOKEN_HEADER = "x-executor-token";
    /** Executor's challenge, byte for byte ({@code apps/local/src/serve.ts}). */
    static final String CHALLENGE = "Bearer realm=\"executor\", Basic realm=\"executor\"";
    /** Liveness and the API's own documentation need no token, as in Executor. */
    private static final List<String> HEALTH = List.of("api", "health");
    private static final List<String> DOCS = List.of("api", "docs");
    /**
     * Where the user's browser lands after authorizing at an OAuth server, and where the desktop app polls for the
     * outcome: neither can carry the token. The unguessable {@code state} of a flow in flight is their gate.
     */
    private static final List<String> OAUTH_CALLBACK = List.of("api", "oauth", "callback");
    private static final List<String> OAUTH_AWAIT = List.of("api", "oauth", "await");
    /** Tether's OAuth client metadata document: authorization servers fetch it, and it holds nothing secret. */
    private static final List<String> OAUTH_CLIENT_METADATA = List.of("api", "oauth", "client-metadata.json");
    private static final List<String> GUARDED_ROOTS = List.of("api", "mcp", "sse", "messages");
    private static final byte[] BODY = "{\"_tag\":\"UnauthorizedError\",\"message\":\"missing or invalid bearer token\"}"
            .getBytes(StandardCharsets.UTF_8);

    private final AuthToken token;
    private final byte @Nullable [] password;
    private final boolean requireAuth;
    /** Actuator's base path as segments, when Actuator shares the API's port; empty when it has a port of its own. */
    private final List<String> actuator;

    BearerAuthFilter(AuthToken token, ApiProperties properties, Environment environment) {
        this.token = token;
        this.password = properties.password() == null ? null : properties.password().getBytes(StandardCharsets.UTF_8);
        this.requireAuth = properties.requireAuth();
        this.actuator = ManagementPortType.get(environment) == ManagementPortType.SAME
                ? segments(PathContainer.parsePath(environment.getProperty("management.endpoints.web.base-path", "/actuator")))
                : List.of();
        if (!requireAuth) {
            String address = environment.getProperty("server.address", "127.0.0.1");
            if (!loopback(address)) {
                throw new StartupFailure("tether.api.require-auth=false serves the API to anyone who reaches it: it is"
                        + " allowed on loopback only, and server.address is " + address
                        + " (set a password, EXECUTOR_AUTH_PASSWORD for bin/executor-sidecar, or listen on 127.0.0.1)");
            }
        }
    }

    private static boolean loopback(String address) {
        String host = address.strip();
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return host.equalsIgnoreCase("localhost") || host.equals("::1") || host.matches("127(\\.\\d{1,3}){3}");
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        HttpHeaders headers = exchange.getRequest().getHeaders();
        if (!requireAuth || AuthenticatedPeer.of(exchange).isPresent() || !guarded(exchange.getRequest().getPath().pathWithinApplication())
                || authorized(headers.getFirst(HttpHeaders.AUTHORIZATION)) || tokenHeaderMatches(headers.getFirst(TOKEN_HEADER))) {
            return chain.filter(exchange);
        }
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatus.UNAUTHORIZED);
        response.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, CHALLENGE);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        DataBuffer body = response.bufferFactory().wrap(BODY);
        return response.writeWith(Mono.just(body));
    }

    /**
     * Decided on the path as routing matches it, segment by segment, decoded and without matrix variables: a
     * check of the raw text would let {@code /%61pi/integrations} or {@code /api;x=1/integrations} through to
     * {@code /api/integrations}. A segment that decodes to a slash is refused outright.
     */
    private boolean guarded(PathContainer path) {
        List<String> segments = segments(path);
        if (segments.stream().anyMatch(segment -> segment.contains("/"))) {
            return true;
        }
        boolean apiOrMcp = !segments.isEmpty() && GUARDED_ROOTS.contains(segments.get(0));
        boolean open = segments.equals(HEALTH) || startsWith(segments, DOCS) || segments.equals(OAUTH_CALLBACK) || segments.equals(OAUTH_CLIENT_METADATA)
                || segments.size() == OAUTH_AWAIT.size() + 1 && startsWith(segments, OAUTH_AWAIT);
        if (open) {
            return false;
        }
        // With a password the web UI is private too, as Executor keeps it; without one it is Executor's public build.
        boolean webUi = password != null && (segments.isEmpty() || !segments.get(0).equals(actuatorRoot()));
        return apiOrMcp || webUi || actuatorButHealth(segments);
    }

    private String actuatorRoot() {
        return actuator.isEmpty() ? "actuator" : actuator.get(0);
    }

    /** {@code /actuator} and everything below it but {@code /actuator/health} and its groups (liveness, readiness). */
    private boolean actuatorButHealth(List<String> segments) {
        if (actuator.isEmpty() || !startsWith(segments, actuator)) {
            return false;
        }
        return !(segments.size() > actuator.size() && segments.get(actuator.size()).equals("health"));
    }

    private static boolean startsWith(List<String> segments, List<String> prefix) {
        return segments.size() >= prefix.size() && segments.subList(0, prefix.size()).equals(prefix);
    }

    private static List<String> segments(PathContainer path) {
        return path.elements().stream()
                .filter(PathContainer.PathSegment.class::isInstance)
                .map(segment -> ((PathContainer.PathSegment) segment).valueToMatch())
                .filter(segment -> !segment.isEmpty())
                .toList();
    }

    private boolean authorized(@Nullable String header) {
        if (header == null) {
            return false;
        }
        if (header.regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
            return token.matches(header.substring(SCHEME.length()).strip());
        }
        return password != null && header.regionMatches(true, 0, BASIC, 0, BASIC.length())
                && basicPasswordMatches(header.substring(BASIC.length()).strip());
    }

    /** Either credential passing is enough: a wrong {@code Authorization} beside a right header still gets in, as in Executor. */
    private boolean tokenHeaderMatches(@Nullable String header) {
        return header != null && !header.isEmpty() && token.matches(header);
    }

    /** {@code user:password} in base64; the user name is not checked (Executor's {@code hasBasicPassword}). */
    private boolean basicPasswordMatches(String encoded) {
        byte[] decoded;
        try {
            decoded = Base64.getDecoder().decode(encoded);
        }
        catch (IllegalArgumentException notBase64) {
            return false;
        }
        int colon = 0;
        while (colon < decoded.length && decoded[colon] != ':') {
            colon++;
        }
        byte[] given = colon < decoded.length ? Arrays.copyOfRange(decoded, colon + 1, decoded.length) : decoded;
        return MessageDigest.isEqual(password, given); // constant time, as for the token
    }
}
