/**
 * Executor's built-in {@code executor} integration answered from Tether's own state: the code runtime's helpers
 * ({@code search}, {@code describe.tool}, {@code executor.sources.list}) and the listed {@code executor.coreTools.*}
 * tools, with Executor 1.5.9's names, schemas, search scores and TypeScript shapes.
 */
@NullMarked
package dev.tether.calls.builtin;

import org.jspecify.annotations.NullMarked;
