/**
 * Tool policies: patterns over tool addresses that allow, block or require approval, matched in Executor's
 * order of precedence and kept in memory for the hot path.
 */
@NullMarked
package dev.tether.policy;

import org.jspecify.annotations.NullMarked;
