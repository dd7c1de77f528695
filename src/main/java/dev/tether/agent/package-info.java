/**
 * The agent-facing MCP servers. {@code /mcp/tools} (streamable HTTP) and the legacy {@code /sse} + {@code /messages}
 * transports serve every stored tool by its address over one small JSON-RPC dispatcher, on the same catalog and tool
 * calls as the REST routes; progress and {@code list_changed} reach them as events. Executor's code mode at
 * {@code /mcp} is {@code agent.codemode}, which uses this package's settings ({@code tether.agent.*}), its reading of
 * JSON-RPC messages and its event streams.
 */
@NullMarked
package dev.tether.agent;

import org.jspecify.annotations.NullMarked;
