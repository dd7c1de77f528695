package dev.tether.store;

import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * A tool as discovered on a connection, already named the way Executor addresses it.
 *
 * @param name                the name used in the address: sanitized and de-duplicated for an MCP tool, a dotted
 *                            {@code group.leaf} for an OpenAPI or GraphQL one
 * @param serverName          the name the server gave it, used for {@code tools/call}; an HTTP source's operation
 * @param description         the server's description, or {@code MCP tool: <name>}
 * @param requiresApproval    the server flagged it destructive, or it is a writing HTTP request
 * @param inputSchema         JSON schema of its arguments
 * @param outputSchema        JSON schema of its result, may be null
 * @param pluginId            Executor's plugin of the tool: {@code mcp} when absent, {@code openapi}, {@code graphql}
 * @param approvalDescription why it needs approval, as Executor words it for its plugin; absent for MCP tools
 */
public record StoredTool(String name, String serverName, String description, boolean requiresApproval,
        @Nullable Map<String, Object> inputSchema, @Nullable Map<String, Object> outputSchema, @Nullable String pluginId,
        @Nullable String approvalDescription) {

    /** An MCP tool. */
    public StoredTool(String name, String serverName, String description, boolean requiresApproval,
            Map<String, Object> inputSchema, @Nullable Map<String, Object> outputSchema) {
        this(name, serverName, description, requiresApproval, inputSchema, outputSchema, null, null);
    }
}
