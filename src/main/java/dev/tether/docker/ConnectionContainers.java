package dev.tether.docker;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.process.ChildProcesses;

/**
 * The containers of one connection's fence on the engine ({@code tether.connection}), as a replica sees them before it
 * starts that connection's child: whose they are ({@code tether.instance}), whether they still run or may, and whether
 * a live child of this daemon owns them.
 */
@Component
public final class ConnectionContainers {

    /** One container of a fenced connection. */
    public record Found(String id, String name, String instance, String state, boolean ownedHere) {

        /** Exited or dead: nothing runs in it, though it holds the connection's name until it is removed. */
        public boolean ended() {
            return "exited".equals(state) || "dead".equals(state);
        }

        @Override
        public String toString() {
            return name + " (" + state + ", replica " + instance + ")";
        }
    }

    private final DockerEngine engine;
    private final InstanceId instance;
    private final ChildProcesses children;

    public ConnectionContainers(DockerEngine engine, InstanceId instance, ChildProcesses children) {
        this.engine = engine;
        this.instance = instance;
        this.children = children;
    }

    /** The containers, running or not, of the connection fenced by {@code fence}. */
    public Flux<Found> of(String fence) {
        return engine.containersLabelled(DockerLabels.CONNECTION, fence)
                .map(container -> {
                    String owner = String.valueOf(container.label(DockerLabels.INSTANCE));
                    return new Found(container.id(), container.names() == null || container.names().isEmpty() ? container.id()
                            : container.names().get(0).replaceFirst("^/", ""), owner, String.valueOf(container.state()),
                            owner.equals(instance.value()) && children.owns(String.valueOf(container.label(DockerLabels.SESSION))));
                });
    }

    /** Removes one, forcibly; false when it was gone already. */
    public Mono<Boolean> remove(Found container) {
        return engine.remove(container.id());
    }
}
