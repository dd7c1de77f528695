/**
 * The MCP protocol client: sessions over a child process (our own transport, which owns the child) or a
 * remote server (streamable HTTP, SSE), with request bounds, cancellation sent as {@code notifications/cancelled},
 * progress per call, servers' questions (elicitation) put to the call that can ask, and redaction of secrets in what a server says.
 *
 * <p>Why it holds ~20 files: most are the protocol's small vocabulary (the exceptions an MCP call can end with,
 * request ids, progress, the server kinds); the work is in {@code McpSessions}, {@code McpSession} and
 * {@code ChildProcessTransport}.
 */
@NullMarked
package dev.tether.mcp;

import org.jspecify.annotations.NullMarked;
