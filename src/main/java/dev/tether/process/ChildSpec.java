package dev.tether.process;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What to run as a stdio child.
 *
 * @param id            unique id of this child; it names the child in logs, the ledger and container labels
 * @param argv          the command and its arguments, already rewritten for Docker where that applies
 * @param env           variables set for the child on top of the few it inherits (see {@code ChildEnvironment});
 *                      values are secrets and never logged
 * @param cwd           working directory, or empty for the daemon's own
 * @param containerName the Docker container this child's {@code docker run} creates, removed on every teardown
 * @param fence         a key no two live children may share on one Docker engine, replicas' included: a connection's
 *                      child where replicas share a store; its {@code docker run} names its container after the key,
 *                      so that the engine itself refuses a second one (empty: no such rule, the child's own name)
 */
public record ChildSpec(String id, List<String> argv, Map<String, String> env, Optional<Path> cwd,
        Optional<String> containerName, Optional<String> fence) {

    public ChildSpec {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(argv, "argv");
        if (argv.isEmpty() || argv.get(0).isBlank()) {
            throw new IllegalArgumentException("argv must start with a command");
        }
        argv = List.copyOf(argv);
        env = env == null ? Map.of() : Map.copyOf(env);
        cwd = cwd == null ? Optional.empty() : cwd;
        containerName = containerName == null ? Optional.empty() : containerName;
        fence = fence == null ? Optional.empty() : fence;
    }

    public static ChildSpec of(String id, List<String> argv) {
        return new ChildSpec(id, argv, Map.of(), Optional.empty(), Optional.empty(), Optional.empty());
    }

    public ChildSpec withArgv(List<String> newArgv, String newContainerName) {
        return new ChildSpec(id, newArgv, env, cwd, Optional.of(newContainerName), fence);
    }

    public ChildSpec withEnv(Map<String, String> newEnv) {
        return new ChildSpec(id, argv, newEnv, cwd, containerName, fence);
    }

    public ChildSpec withCwd(Path newCwd) {
        return new ChildSpec(id, argv, env, Optional.ofNullable(newCwd), containerName, fence);
    }

    public ChildSpec withFence(Optional<String> newFence) {
        return new ChildSpec(id, argv, env, cwd, containerName, newFence);
    }

    /** The command line for logs: arguments are shown, environment values never are. */
    public String describe() {
        return String.join(" ", argv) + (env.isEmpty() ? "" : " (env: " + String.join(",", env.keySet()) + "=***)");
    }

    /** As {@link #describe()}: environment values never show. */
    @Override
    public String toString() {
        return "ChildSpec[" + id + ": " + describe() + "]";
    }
}
