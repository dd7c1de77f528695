/**
 * Health checks: a ping on the connection's pooled session with a timeout, shared by concurrent askers,
 * batched into generations so that a refresh storm cancels what is stale, and persisted as {@code lastHealth}.
 */
@NullMarked
package dev.tether.health;

import org.jspecify.annotations.NullMarked;
