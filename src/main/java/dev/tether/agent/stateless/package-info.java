/**
 * MCP 2026-07-28, the stateless era, on the agent endpoints {@code /mcp} (code mode) and {@code /mcp/tools}, beside
 * the handshake era that {@code agent} and {@code agent.codemode} serve on the same URLs. A request that names its
 * method in the {@code Mcp-Method} header (or the modern version in {@code MCP-Protocol-Version}) comes here; any
 * other goes on as before, so clients of 2024-11-05 to 2025-11-25 are untouched. The protocol itself (validation of
 * {@code _meta}, {@code server/discover}, {@code resultType}, {@code subscriptions/listen}, sealing
 * {@code requestState}) is the MCP Java SDK's modern server ({@code io.modelcontextprotocol.modern}); this package is
 * its WebFlux transport and Tether's two tool sets on it. A paused {@code execute} answers {@code input_required},
 * and its retry resumes the execution wherever it is held ({@code execution.ResumeAnywhere}).
 */
@NullMarked
package dev.tether.agent.stateless;

import org.jspecify.annotations.NullMarked;
