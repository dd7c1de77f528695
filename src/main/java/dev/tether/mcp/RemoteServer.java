package dev.tether.mcp;

import java.net.URI;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

import io.modelcontextprotocol.client.transport.McpHttpClientTransportAuthorizationException;
import io.modelcontextprotocol.modern.client.transport.McpHttpStatusException;
import org.jspecify.annotations.Nullable;

/**
 * An MCP server reached over HTTP.
 *
 * @param name        its name, used in errors and logs
 * @param endpoint    its URL, e.g. {@code http://127.0.0.1:3001/mcp} or {@code .../sse}
 * @param transport   how to talk to it
 * @param headers     sent with every request; values are secrets
 * @param queryParams added to the endpoint
 * @param bearer      when the server is authorized by OAuth: the token source asked before each request
 */
public record RemoteServer(String name, URI endpoint, Transport transport, Map<String, String> headers,
        Map<String, String> queryParams, Optional<BearerToken> bearer) implements McpServer {

    /**
     * The revision a connection to a remote server opens with: MCP 2026-07-28, whose {@code server/discover} goes
     * first over streamable HTTP; a server that does not list it there is spoken to in the handshake era. What Tether
     * sends before a connection exists (OAuth discovery, probes) says this version too.
     */
    public static final String OPENING_VERSION = io.modelcontextprotocol.modern.McpSchema.LATEST_PROTOCOL_VERSION;

    /** The newest revision of the handshake era, which an {@code initialize} proposes. */
    public static final String HANDSHAKE_VERSION = io.modelcontextprotocol.spec.ProtocolVersions.MCP_2025_11_25;

    /** Streamable HTTP, SSE, or streamable HTTP first and SSE when that fails. */
    public enum Transport { STREAMABLE_HTTP, SSE, AUTO }

    /**
     * How the SDK reports an HTTP status it did not expect ("Status code: 401", "non-OK HTTP code: 403 - …",
     * "SSE stream: 401"). Only the phrase counts: a bare "401" also turns up in endpoints, ports and ids.
     */
    private static final Pattern AUTHORIZATION_STATUS = Pattern.compile("(?i)(status code|HTTP code|SSE stream)\\W*(401|403)\\b");

    /**
     * Whether a failure to talk to a remote server means it answered, but wants credentials first (401, 403): in the
     * handshake era's transports, and in MCP 2026-07-28's, which reports the status as {@link McpHttpStatusException}.
     */
    public static boolean wantsCredentials(@Nullable Throwable failure) {
        for (Throwable e = failure; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (e instanceof McpHttpClientTransportAuthorizationException || e instanceof AuthorizationExpiredException
                    || e instanceof McpHttpStatusException status && (status.statusCode() == 401 || status.statusCode() == 403)
                    || e.getMessage() != null && AUTHORIZATION_STATUS.matcher(e.getMessage()).find()) {
                return true;
            }
        }
        return false;
    }

    public RemoteServer {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(transport, "transport");
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        queryParams = queryParams == null ? Map.of() : Map.copyOf(queryParams);
        bearer = bearer == null ? Optional.empty() : bearer;
    }

    /** A server authorized by its headers and query parameters alone. */
    public RemoteServer(String name, URI endpoint, Transport transport, Map<String, String> headers,
            Map<String, String> queryParams) {
        this(name, endpoint, transport, headers, queryParams, Optional.empty());
    }

    /** Names of headers and query parameters only: values are secrets. */
    @Override
    public String toString() {
        return "RemoteServer[" + name + ": " + endpoint + " over " + transport + ", headers=" + headers.keySet()
                + "=***, queryParams=" + queryParams.keySet() + "=***" + (bearer.isPresent() ? ", bearer=***" : "") + "]";
    }
}
