package dev.tether.calls;

import java.util.List;
import java.util.Map;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionNotFoundException;
import dev.tether.store.ConnectionStore;
import dev.tether.store.CredentialStore;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationStore;
import dev.tether.store.StoredTool;

/** Calls of tools of HTTP sources: each is handed to the {@link SourceTools} of its integration's kind. */
@Component
public final class SourceCalls {

    private final IntegrationStore integrations;
    private final ConnectionStore connections;
    private final CredentialStore credentials;
    private final List<SourceTools> sources;

    public SourceCalls(IntegrationStore integrations, ConnectionStore connections, CredentialStore credentials,
            List<SourceTools> sources) {
        this.integrations = integrations;
        this.connections = connections;
        this.credentials = credentials;
        this.sources = List.copyOf(sources);
    }

    /** The integration of the connection when it is an HTTP source; empty for an MCP server. */
    Mono<Integration> source(ConnectionKey key) {
        return integrations.find(key.integration()).filter(integration -> integration.config() instanceof HttpSourceConfig);
    }

    /** The tool's answer as Executor's {@code ToolResult}; see {@link SourceTools#invoke}. */
    Mono<Map<String, Object>> invoke(Integration integration, ConnectionKey key, StoredTool tool, Map<String, Object> arguments) {
        String kind = ((HttpSourceConfig) integration.config()).kind();
        SourceTools tools = sources.stream().filter(s -> s.kind().equals(kind)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no tools for sources of kind " + kind));
        return connections.find(key)
                .switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key)))
                .zipWith(credentials.credentials(key).defaultIfEmpty(Map.of()))
                .flatMap(found -> tools.invoke(integration, found.getT1(), found.getT2(), tool, arguments));
    }
}
