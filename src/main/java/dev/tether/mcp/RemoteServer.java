package dev.tether.mcp;

import java.net.URI;
import java.util.Map;
import java.util.Objects;

/**
 * An MCP server reached over HTTP.
 *
 * @param name        its name, used in errors and logs
 * @param endpoint    its URL, e.g. {@code http://127.0.0.1:3001/mcp} or {@code .../sse}
 * @param transport   how to talk to it
 * @param headers     sent with every request; values are secrets
 * @param queryParams added to the endpoint
 */
public record RemoteServer(String name, URI endpoint, Transport transport, Map<String, String> headers,
        Map<String, String> queryParams) implements McpServer {

    /** Streamable HTTP, SSE, or streamable HTTP first and SSE when that fails. */
    public enum Transport { STREAMABLE_HTTP, SSE, AUTO }

    public RemoteServer {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(transport, "transport");
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        queryParams = queryParams == null ? Map.of() : Map.copyOf(queryParams);
    }
}
