package dev.tether.session;

import java.net.URI;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import dev.tether.mcp.BearerToken;
import dev.tether.mcp.McpServer;
import dev.tether.mcp.RemoteServer;
import dev.tether.mcp.StdioServer;
import dev.tether.store.Integration;
import dev.tether.store.OAuthGrant;
import dev.tether.store.RemoteConfig;
import dev.tether.store.StdioConfig;

/** How to reach the server of a stored integration with a connection's credentials. */
public final class IntegrationServers {

    private IntegrationServers() {
    }

    /**
     * The server of an integration; connection credentials become a stdio child's environment or remote request headers.
     * Fails with {@link NotAnMcpServerException} for an OpenAPI or GraphQL source.
     */
    public static McpServer of(Integration integration, Map<String, String> credentialValues) {
        return of(integration, credentialValues, Optional.empty());
    }

    /**
     * As {@link #of(Integration, Map)}, for a connection whose remote server is authorized by OAuth: its tokens are
     * credentials too, but they go out as {@code Authorization: Bearer} from {@code bearer}, refreshed as they expire.
     */
    public static McpServer of(Integration integration, Map<String, String> credentialValues, Optional<BearerToken> bearer) {
        if (integration.config() instanceof StdioConfig stdio) {
            Map<String, String> env = new HashMap<>(stdio.env());
            env.putAll(credentialValues);
            return new StdioServer(integration.slug(), stdio.command(), stdio.args(), env,
                    Optional.ofNullable(stdio.cwd()).map(Path::of));
        }
        if (!(integration.config() instanceof RemoteConfig remote)) {
            throw new NotAnMcpServerException(integration.slug(), integration.config().transport());
        }
        Map<String, String> headers = new HashMap<>(remote.headers());
        credentialValues.forEach((name, value) -> {
            if (!OAuthGrant.isToken(name)) {
                headers.put(name, value);
            }
        });
        return new RemoteServer(integration.slug(), URI.create(remote.endpoint()), transport(remote.remoteTransport()), headers,
                remote.queryParams(), bearer);
    }

    private static RemoteServer.Transport transport(RemoteConfig.RemoteTransport transport) {
        return switch (transport) {
            case STREAMABLE_HTTP -> RemoteServer.Transport.STREAMABLE_HTTP;
            case SSE -> RemoteServer.Transport.SSE;
            case AUTO -> RemoteServer.Transport.AUTO;
        };
    }
}
