package dev.tether.session;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.mcp.McpSession;
import dev.tether.mcp.McpSessions;
import dev.tether.mcp.StdioServer;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionNotFoundException;
import dev.tether.store.ConnectionStore;
import dev.tether.store.CredentialStore;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationNotFoundException;
import dev.tether.store.IntegrationStore;

/**
 * MCP sessions for stored connections: the integration says how to start the server, the connection's
 * credentials become its environment.
 */
@Component
public final class ConnectionSessions {

    private final IntegrationStore integrations;
    private final ConnectionStore connections;
    private final CredentialStore credentials;
    private final McpSessions sessions;

    public ConnectionSessions(IntegrationStore integrations, ConnectionStore connections, CredentialStore credentials,
            McpSessions sessions) {
        this.integrations = integrations;
        this.connections = connections;
        this.credentials = credentials;
        this.sessions = sessions;
    }

    /**
     * Runs {@code body} on a session with the connection's server; the server's child lives as long as the
     * returned Mono's subscription. Fails with a not-found error when the connection or integration is unknown.
     */
    public <T> Mono<T> withSession(ConnectionKey key, Function<McpSession, Mono<T>> body) {
        return server(key).flatMap(server -> sessions.withSession(server, body));
    }

    private Mono<StdioServer> server(ConnectionKey key) {
        return connections.find(key)
                .switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key)))
                .then(integrations.find(key.integration()))
                .switchIfEmpty(Mono.error(() -> new IntegrationNotFoundException(key.integration())))
                .zipWith(credentials.credentials(key), ConnectionSessions::server);
    }

    private static StdioServer server(Integration integration, Map<String, String> credentialValues) {
        Map<String, String> env = new HashMap<>(integration.config().env());
        env.putAll(credentialValues);
        return new StdioServer(integration.slug(), integration.config().command(), integration.config().args(), env,
                Optional.ofNullable(integration.config().cwd()).map(Path::of));
    }
}
