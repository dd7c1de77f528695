/**
 * Docker containers are not children: {@code docker run} argv rewriting (name, labels, {@code --init}), the
 * Docker Engine API over its unix socket (stop, remove), and the reaper that removes containers labelled
 * with this instance that no live session owns.
 */
@NullMarked
package dev.tether.docker;

import org.jspecify.annotations.NullMarked;
