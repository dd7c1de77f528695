/**
 * Child processes as resources of a reactive pipeline: spawned inside {@code usingWhen}, released on complete,
 * error and cancel by a bounded teardown ladder (stdin EOF, SIGTERM to the tree, SIGKILL, container removal),
 * recorded in a ledger so that a restart reaps what a crashed daemon left. Nothing outside this package
 * touches {@link java.lang.Process}.
 *
 * <p>Why it holds ~20 files: the child's lifecycle is one job whose pieces (spawn, pipes, ladder, ledger, reaper,
 * meters) share package-private state that nothing else may touch; keeping them in one package is what lets
 * {@code Process} stay invisible to the rest of Tether.
 */
@NullMarked
package dev.tether.process;

import org.jspecify.annotations.NullMarked;
