/**
 * Executor's 1Password plugin: the one binding (how to reach 1Password, which vault), kept sealed in the store as
 * Executor keeps its plugin blob; its status and vaults through the {@code op} CLI, run as an owned child; Executor's
 * "not configured" answers when there is no binding. Also answers the {@code executor.onepassword.*} built-ins.
 */
@NullMarked
package dev.tether.onepassword;

import org.jspecify.annotations.NullMarked;
