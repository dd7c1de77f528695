package dev.tether.api;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
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

/** Every route under {@code /api} but {@code /api/health}, and the agent endpoint {@code /mcp}, needs the token. */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
final class BearerAuthFilter implements WebFilter {

    /** The auth scheme; RFC 7235 makes its name case-insensitive, so {@code bearer} and {@code BEARER} count too. */
    private static final String SCHEME = "Bearer ";
    /** Liveness and the API's own documentation need no token, as in Executor. */
    private static final List<String> HEALTH = List.of("api", "health");
    private static final List<String> DOCS = List.of("api", "docs");
    private static final byte[] BODY = "{\"_tag\":\"UnauthorizedError\",\"message\":\"missing or invalid bearer token\"}"
            .getBytes(StandardCharsets.UTF_8);

    private final AuthToken token;

    BearerAuthFilter(AuthToken token) {
        this.token = token;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        String authorization = exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION);
        if (!guarded(exchange.getRequest().getPath().pathWithinApplication()) || authorized(authorization)) {
            return chain.filter(exchange);
        }
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatus.UNAUTHORIZED);
        response.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"executor\"");
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        DataBuffer body = response.bufferFactory().wrap(BODY);
        return response.writeWith(Mono.just(body));
    }

    /**
     * Decided on the path as routing matches it, segment by segment, decoded and without matrix variables: a
     * check of the raw text would let {@code /%61pi/integrations} or {@code /api;x=1/integrations} through to
     * {@code /api/integrations}. A segment that decodes to a slash is refused outright.
     */
    private static boolean guarded(PathContainer path) {
        List<String> segments = path.elements().stream()
                .filter(PathContainer.PathSegment.class::isInstance)
                .map(segment -> ((PathContainer.PathSegment) segment).valueToMatch())
                .filter(segment -> !segment.isEmpty())
                .toList();
        if (segments.stream().anyMatch(segment -> segment.contains("/"))) {
            return true;
        }
        boolean apiOrMcp = !segments.isEmpty() && (segments.get(0).equals("api") || segments.get(0).equals("mcp"));
        boolean open = segments.equals(HEALTH) || (segments.size() >= 2 && segments.subList(0, 2).equals(DOCS));
        return apiOrMcp && !open;
    }

    private boolean authorized(String header) {
        return header != null && header.regionMatches(true, 0, SCHEME, 0, SCHEME.length())
                && token.matches(header.substring(SCHEME.length()).strip());
    }
}
