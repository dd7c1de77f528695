/**
 * Whether the daemon can still do its work, told truthfully: a probe through the engine's threads, executions' pool
 * and store ({@link dev.tether.liveness.EngineProbe}) behind {@code /api/health} and Actuator's liveness, and an
 * exit with one clear line when the JVM runs out of memory outside executions' code.
 */
@NullMarked
package dev.tether.liveness;

import org.jspecify.annotations.NullMarked;
