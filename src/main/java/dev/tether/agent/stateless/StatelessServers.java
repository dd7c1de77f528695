package dev.tether.agent.stateless;

import java.time.Duration;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.HmacRequestStateCodec;
import io.modelcontextprotocol.modern.server.McpServer;
import io.modelcontextprotocol.modern.server.feature.McpAsyncToolRepository;
import io.modelcontextprotocol.modern.server.feature.McpChangePublisher;
import io.modelcontextprotocol.modern.server.feature.ServerChange;
import io.modelcontextprotocol.modern.server.feature.ToolsFeature;

import dev.tether.catalog.CatalogService;
import dev.tether.store.secrets.StoreKeys;

/**
 * How both stateless servers are built: the SDK's server with Tether's {@code requestState} seal and the tool list's
 * changes as {@code subscriptions/listen} has them.
 *
 * <p>The seal is the SDK's HMAC codec under a key derived from the store key ({@link StoreKeys}), which every replica
 * of one store shares and a restart keeps: a retry opens on any replica, today or after a restart. It binds the state
 * to the caller's credential ({@link StatelessTransport#PRINCIPAL}), the method and the tool, and expires with the
 * pause it names, so a state can be neither forged, nor altered, nor used by another caller or for another tool.
 */
final class StatelessServers {

    private final McpJsonMapper json;
    private final JsonSchemaValidator schemas;
    private final Duration listTtl;
    private final HmacRequestStateCodec seal;
    private final McpChangePublisher changes;

    StatelessServers(McpJsonMapper json, JsonSchemaValidator schemas, Duration listTtl, StoreKeys keys, Duration stateLifetime,
            CatalogService catalogs) {
        this.json = json;
        this.schemas = schemas;
        this.listTtl = listTtl;
        this.seal = HmacRequestStateCodec.builder()
                .key(keys.derived("mcp request state"))
                .ttl(stateLifetime)
                .principalExtractor(StatelessServers::principal)
                .jsonMapper(json)
                .build();
        // a hint that the tools may have changed: the client lists again, whatever changed
        this.changes = () -> catalogs.changes().map(integration -> (ServerChange) new ServerChange.ToolsListChanged());
    }

    /** A server named {@code name} whose tools are {@code tools}, listed with {@code ttlMs} of the list TTL. */
    McpServer server(String name, String version, McpAsyncToolRepository tools) {
        return McpServer.builder()
                .serverInfo(McpSchema.Implementation.builder(name, version).build())
                .jsonMapper(json)
                .feature(ToolsFeature.ofAsync(tools, json, schemas, listTtl.toMillis(), McpSchema.CacheScope.PRIVATE))
                .subscriptions(changes)
                .requestStateCodec(seal)
                .build();
    }

    private static String principal(McpTransportContext context) {
        return String.valueOf(context.get(StatelessTransport.PRINCIPAL));
    }
}
