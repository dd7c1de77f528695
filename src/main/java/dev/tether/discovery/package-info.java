/**
 * Daemon discovery for Executor's CLI: the {@code server-control/server.json} record the CLI reads before
 * deciding to start a daemon of its own, written once Tether listens and removed at shutdown if still ours.
 */
@NullMarked
package dev.tether.discovery;

import org.jspecify.annotations.NullMarked;
