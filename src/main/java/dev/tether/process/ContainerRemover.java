package dev.tether.process;

import java.time.Duration;

import reactor.core.publisher.Mono;

/**
 * Stops and removes the container a {@code docker run} child created. Removal is the last rung of every
 * teardown: killing the {@code docker run} client does not stop its container.
 */
public interface ContainerRemover {

    /**
     * Stops the container by name as {@code docker stop} does: SIGTERM to its PID 1, SIGKILL after {@code grace}.
     * The {@code docker run} client then exits by itself, as after any exit of its container.
     *
     * @return true when a running container was stopped, false when none ran by that name (not created yet,
     *         or exited already); the default, for hosts and tests without an engine
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
