package dev.tether.store;

import java.util.Map;

/**
 * A tool as discovered on a connection, already named the way Executor addresses it.
 *
 * @param name             the sanitized, de-duplicated name used in the address
 * @param serverName       the name the server gave it, used for {@code tools/call}
 * @param description      the server's description, or {@code MCP tool: <name>}
 * @param requiresApproval the server flagged it destructive
 * @param inputSchema      JSON schema of its arguments
 * @param outputSchema     JSON schema of its result, may be null
 */
public record StoredTool(String name, String serverName, String description, boolean requiresApproval,
        Map<String, Object> inputSchema, Map<String, Object> outputSchema) {
}
