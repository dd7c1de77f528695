/**
 * Child processes as resources of a reactive pipeline: spawned inside {@code usingWhen}, released on complete,
 * error and cancel by a bounded teardown ladder (stdin EOF, SIGTERM to the tree, SIGKILL, container removal),
 * recorded in a ledger so that a restart reaps what a crashed daemon left. Nothing outside this package
 * touches {@link java.lang.Process}.
 */
@NullMarked
package dev.tether.process;

import org.jspecify.annotations.NullMarked;
