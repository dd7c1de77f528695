package dev.tether.process;

import java.time.Duration;

import reactor.core.publisher.Mono;

/**
 * Stops and removes the container a {@code docker run} child created. Removal is the last rung of every
 * teardown: killing the {@code docker run} client does not stop its container.
 *
 * <p>A child's container is found by the child itself (its id, which the rewrite put on the container as a label), never
 * by its name alone: a name can pass to another child, of this replica or of another one on the same engine, once this
 * child's container is gone, and a teardown still climbing must never end that one.
 */
public interface ContainerRemover {

    /**
     * Ends {@code child}'s container so that its {@code docker run} client exits by itself: a running one is stopped as
     * {@code docker stop} does (SIGTERM to its PID 1, SIGKILL after {@code grace}); one that does not run (created and
     * not started yet, or exited) is removed, which ends a client waiting to start it or for it to exit.
     *
     * @return true when there was a container to end, false when the engine has none of that child (yet); the
     *         default, for hosts and tests without an engine
     */
    default Mono<Boolean> stopContainerOf(ChildSpec child, Duration grace) {
        return Mono.just(false);
    }

    /**
     * Removes {@code child}'s container, forcibly; idempotent.
     *
     * @return true when a container was removed, false when the child had none
     */
    Mono<Boolean> removeContainerOf(ChildSpec child);

    /** For hosts without Docker: there is never a container to remove. */
    ContainerRemover NONE = child -> Mono.just(false);
}
