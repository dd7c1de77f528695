/**
 * The MCP protocol client: sessions over a child process (our own transport, which owns the child) or a
 * remote server (streamable HTTP, SSE), with request bounds, cancellation sent as {@code notifications/cancelled},
 * progress per call, servers' questions (elicitation) put to the call that can ask, and redaction of secrets in what a server says.
 */
@NullMarked
package dev.tether.mcp;

import org.jspecify.annotations.NullMarked;
