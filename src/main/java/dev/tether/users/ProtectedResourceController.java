package dev.tether.users;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;

/**
 * RFC 9728 protected resource metadata for the agent endpoints, in {@code oidc} mode: an MCP client that is refused at
 * {@code /mcp} finds, from the challenge's {@code resource_metadata}, which authorization server to get a token from, and
 * does OAuth against the provider. {@code /.well-known/oauth-protected-resource/mcp} describes {@code /mcp} (and likewise
 * {@code /mcp/tools}, {@code /sse}); the root one the origin. Not there in {@code local} mode, where there is no provider.
 */
@RestController
final class ProtectedResourceController {

    static final String WELL_KNOWN = "/.well-known/oauth-protected-resource";

    private final IdentityProperties properties;

    ProtectedResourceController(IdentityProperties properties) {
        this.properties = properties;
    }

    @GetMapping({ WELL_KNOWN, WELL_KNOWN + "/mcp", WELL_KNOWN + "/mcp/tools", WELL_KNOWN + "/sse" })
    ResponseEntity<Map<String, Object>> metadata(ServerWebExchange exchange) {
        if (properties.mode() != IdentityProperties.Mode.OIDC) {
            return ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("_tag", "RouteNotFound",
                    "message", "no protected resource metadata: this daemon takes its own token (tether.identity.mode=local)"));
        }
        String path = exchange.getRequest().getPath().pathWithinApplication().value().substring(WELL_KNOWN.length());
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("resource", origin(exchange.getRequest(), properties) + path);
        metadata.put("authorization_servers", List.of(String.valueOf(properties.oidc().issuer())));
        metadata.put("scopes_supported", properties.oidc().scopes());
        metadata.put("bearer_methods_supported", List.of("header"));
        metadata.put("resource_name", "Tether");
        return ResponseEntity.ok().header("Cache-Control", "max-age=300").body(metadata);
    }

    /** The URL of the metadata describing {@code path} (an agent endpoint), for a 401's challenge. */
    static String metadataUrl(ServerHttpRequest request, IdentityProperties properties, String path) {
        return origin(request, properties) + WELL_KNOWN + path;
    }

    /** The origin the client used, or {@code tether.identity.oidc.public-url} behind a proxy (sign-in shares it). */
    static String origin(ServerHttpRequest request, IdentityProperties properties) {
        URI configured = properties.oidc().publicUrl();
        if (configured != null) {
            String text = configured.toString();
            return text.endsWith("/") ? text.substring(0, text.length() - 1) : text;
        }
        URI uri = request.getURI();
        return uri.getScheme() + "://" + uri.getRawAuthority();
    }
}
