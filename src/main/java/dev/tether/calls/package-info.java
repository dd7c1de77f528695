/**
 * The one door to a tool: {@link dev.tether.calls.ToolCalls} resolves an address (a catalog tool or a built-in)
 * and calls it on the connection's pooled session, with policies applied; executions, the REST routes and the
 * agent endpoint all come through here. Also Executor's failure envelope for a tool call, and the code runtime's
 * helpers ({@code search}, {@code describe.tool}, {@code executor.sources.list}), which search and describe every tool
 * by its address, with Executor 1.5.9's search scores. The answers of {@code GET /api/tools}, kept encoded between
 * requests ({@link dev.tether.calls.ToolListings}).
 */
@NullMarked
package dev.tether.calls;

import org.jspecify.annotations.NullMarked;
