/**
 * The agent-facing MCP server: {@code /mcp} (streamable HTTP) and the legacy {@code /sse} + {@code /messages}
 * transports over one small JSON-RPC dispatcher, on the same catalog and tool calls as the REST routes.
 * Agents see every stored tool by its address; progress and {@code list_changed} reach them as events.
 */
@NullMarked
package dev.tether.agent;

import org.jspecify.annotations.NullMarked;
