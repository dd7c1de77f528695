/**
 * Pooled sessions: one warm MCP session per connection, leased with {@code usingWhen} by health checks, syncs
 * and tool calls; single-flight creation, idle eviction, a global cap on live children and a per-session cap
 * on parallel leases.
 */
@NullMarked
package dev.tether.session;

import org.jspecify.annotations.NullMarked;
