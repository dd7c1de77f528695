/**
 * The agent-facing MCP servers. {@code /mcp} is Executor's code mode: {@code execute} and {@code resume} on the
 * execution engine, with a session's questions going to the model, the web UI or the agent's own client
 * ({@code ?elicitation_mode=}), and the web UI's approval route under {@code /api/mcp-sessions}. {@code /mcp/tools}
 * (streamable HTTP) and the legacy {@code /sse} + {@code /messages} transports serve every stored tool by its address
 * over one small JSON-RPC dispatcher, on the same catalog and tool calls as the REST routes; progress and
 * {@code list_changed} reach them as events.
 */
@NullMarked
package dev.tether.agent;

import org.jspecify.annotations.NullMarked;
