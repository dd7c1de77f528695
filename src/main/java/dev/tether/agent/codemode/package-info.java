/**
 * Executor's code mode at {@code /mcp}: the two tools {@code execute} and {@code resume} on the execution engine, the
 * sessions of MCP's streamable HTTP transport as the TypeScript SDK serves them, and where a paused execution's
 * question goes ({@code ?elicitation_mode=}): to the model, to the web UI (whose approval route under
 * {@code /api/mcp-sessions} lives here too) or to the agent's own client. It shares the agent package's settings,
 * message reading and event streams, and nothing in {@code agent} knows it.
 */
@NullMarked
package dev.tether.agent.codemode;

import org.jspecify.annotations.NullMarked;
