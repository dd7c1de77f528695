/**
 * Executor's built-in {@code executor} integration: the registry every feature adds its built-ins to
 * ({@link dev.tether.calls.builtin.BuiltinHandlers}), the listed {@code executor.coreTools.*} tools answered from
 * Tether's own state, with Executor 1.5.9's names, schemas, descriptions and TypeScript shapes, and the way a
 * feature runs a built-in that is the twin of a route ({@link dev.tether.calls.builtin.BuiltinArguments}). The code runtime's
 * helpers, which read tool addresses, are {@code calls.RuntimeHelpers}.
 */
@NullMarked
package dev.tether.calls.builtin;

import org.jspecify.annotations.NullMarked;
