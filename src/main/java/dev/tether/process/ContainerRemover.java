package dev.tether.process;

import java.time.Duration;

import reactor.core.publisher.Mono;

/**
 * Stops and removes the container a {@code docker run} child created. Removal is the last rung of every
 * teardown: killing the {@code docker run} client does not stop its container.
 */
public interface ContainerRemover {

    /**
     * Ends the container by name so that its {@code docker run} client exits by itself: a running one is stopped as
     * {@code docker stop} does (SIGTERM to its PID 1, SIGKILL after {@code grace}); one that does not run (created and
     * not started yet, or exited) is removed, which ends a client waiting to start it or for it to exit.
     *
     * @return true when there was a container to end, false when the engine has none by that name (yet); the
     *         default, for hosts and tests without an engine
     */
    default Mono<Boolean> stop(String containerName, Duration grace) {
        return Mono.just(false);
    }

    /**
     * Removes the container by name, forcibly; idempotent.
     *
     * @return true when a container was removed, false when none had that name
     */
    Mono<Boolean> remove(String containerName);

    /** For hosts without Docker: there is never a container to remove. */
    ContainerRemover NONE = name -> Mono.just(false);
}
