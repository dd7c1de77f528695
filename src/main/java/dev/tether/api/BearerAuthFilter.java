package dev.tether.api;

import java.nio.charset.StandardCharsets;
import java.util.Set;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
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

    private static final String PREFIX = "Bearer ";
    /** Liveness and the API's own documentation need no token, as in Executor. */
    private static final Set<String> OPEN = Set.of("/api/health", "/api/docs");
    private static final byte[] BODY = "{\"_tag\":\"UnauthorizedError\",\"message\":\"missing or invalid bearer token\"}"
            .getBytes(StandardCharsets.UTF_8);

    private final AuthToken token;

    BearerAuthFilter(AuthToken token) {
        this.token = token;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        String path = exchange.getRequest().getPath().pathWithinApplication().value();
        boolean guarded = (path.startsWith("/api/") && !OPEN.contains(path) && !path.startsWith("/api/docs/"))
                || path.equals("/mcp") || path.startsWith("/mcp/");
        if (!guarded || authorized(exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION))) {
            return chain.filter(exchange);
        }
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatus.UNAUTHORIZED);
        response.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"executor\"");
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        DataBuffer body = response.bufferFactory().wrap(BODY);
        return response.writeWith(Mono.just(body));
    }

    private boolean authorized(String header) {
        return header != null && header.startsWith(PREFIX) && token.matches(header.substring(PREFIX.length()).strip());
    }
}
