/**
 * The agent-facing MCP servers. {@code /mcp} is Executor's code mode: {@code execute} and {@code resume} on the
 * execution engine, with a session's questions going to the model, the web UI or the agent's own client
 * ({@code ?elicitation_mode=}), and the web UI's approval route under {@code /api/mcp-sessions}. {@code /mcp/tools}
 * (streamable HTTP) and the legacy {@code /sse} + {@code /messages} transports serve every stored tool by its address
 * over one small JSON-RPC dispatcher, on the same catalog and tool calls as the REST routes; progress and
 * {@code list_changed} reach them as events.
 *
 * <p>Why it holds ~1,900 lines: it is two servers an agent chooses between, code mode (the {@code CodeMode*} classes,
 * {@code ExecuteDescription}, {@code ElicitationMode}, {@code McpSessionApprovals}) and the catalog-tools server
 * ({@code Agent*}, {@code LegacySseEndpoint}), which share their settings and the JSON-RPC framing. Code mode is the
 * next to get a package of its own.
 */
@NullMarked
package dev.tether.agent;

import org.jspecify.annotations.NullMarked;
