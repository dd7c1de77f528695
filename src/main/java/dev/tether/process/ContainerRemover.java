package dev.tether.process;

import reactor.core.publisher.Mono;

/**
 * Removes the container a {@code docker run} child created. The last rung of every teardown: killing
 * the {@code docker run} client does not stop its container.
 */
public interface ContainerRemover {

    /**
     * Removes the container by name, forcibly; idempotent.
     *
     * @return true when a container was removed, false when none had that name
     */
    Mono<Boolean> remove(String containerName);

    /** For hosts without Docker: there is never a container to remove. */
    ContainerRemover NONE = name -> Mono.just(false);
}
