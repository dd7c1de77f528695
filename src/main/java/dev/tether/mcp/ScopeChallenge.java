package dev.tether.mcp;

import java.net.http.HttpHeaders;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.modelcontextprotocol.client.transport.McpHttpClientTransportAuthorizationException;
import io.modelcontextprotocol.modern.client.transport.McpHttpStatusException;

/**
 * Reads a {@code 403} refusal for want of scope from the SDK's transports (both eras carry the response's headers):
 * {@code WWW-Authenticate: Bearer error="insufficient_scope", scope="a b"} (RFC 6750 §3, MCP's step-up authorization).
 */
final class ScopeChallenge {

    private static final Pattern INSUFFICIENT = Pattern.compile("(?i)\\berror\\s*=\\s*\"?insufficient_scope\\b");
    private static final Pattern SCOPE = Pattern.compile("(?i)(?:^|[\\s,])scope\\s*=\\s*\"([^\"]*)\"");

    private ScopeChallenge() {
    }

    /** The scope the server named (empty when it named none), when {@code failure} is such a refusal. */
    static Optional<String> of(Throwable failure) {
        for (Throwable e = failure; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (e instanceof McpHttpClientTransportAuthorizationException refused && refused.getResponseInfo() != null
                    && refused.getResponseInfo().statusCode() == 403) {
                return scope(refused.getResponseInfo().headers());
            }
            if (e instanceof McpHttpStatusException refused && refused.statusCode() == 403 && refused.headers() != null) {
                return scope(refused.headers());
            }
        }
        return Optional.empty();
    }

    private static Optional<String> scope(HttpHeaders headers) {
        for (String challenge : headers.allValues("WWW-Authenticate")) {
            if (challenge.regionMatches(true, 0, "Bearer", 0, 6) && INSUFFICIENT.matcher(challenge).find()) {
                Matcher scope = SCOPE.matcher(challenge);
                return Optional.of(scope.find() ? scope.group(1).strip() : "");
            }
        }
        return Optional.empty();
    }
}
