/**
 * The one door to a tool: {@link dev.tether.calls.ToolCalls} resolves an address (a catalog tool or a built-in)
 * and calls it on the connection's pooled session, with policies applied; executions, the REST routes and the
 * agent endpoint all come through here. Also Executor's failure envelope for a tool call.
 */
@NullMarked
package dev.tether.calls;

import org.jspecify.annotations.NullMarked;
