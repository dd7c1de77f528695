package dev.tether.docker;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.springframework.stereotype.Component;

import dev.tether.process.ChildSpec;

/**
 * Makes a {@code docker run} child findable: {@code docker run} is only a client, and killing it leaves its
 * container running. The rewrite adds a name and labels (so teardown and the reaper can remove the
 * container) and {@code --init} (so signals reach the server inside); the user's flags, image and
 * arguments are kept as given. Any other command passes through untouched.
 *
 * <p>A child with a fence ({@link ChildSpec#fence()}: a connection's, where replicas share a store) gets a
 * {@code tether.connection} label with it and, unless the user named the container, the name every replica gives
 * that connection's container: the engine refuses to create a second container by one name, so two replicas (or
 * a dead one's late {@code docker run} client and its successor) can never run two containers of a connection on it
 * at once.
 */
@Component
public final class DockerRunRewriter {

    /** Global docker options that take a value in the next argument. */
    private static final Set<String> GLOBAL_OPTIONS_WITH_VALUE = Set.of("--config", "-c", "--context", "-H", "--host",
            "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey");

    /** {@code docker run} options that take no value; every other option without {@code =} takes the next argument. */
    private static final Set<String> BOOLEAN_RUN_OPTIONS = Set.of("--interactive", "--tty", "--detach", "--rm", "--init",
            "--privileged", "--publish-all", "--read-only", "--no-healthcheck", "--oom-kill-disable", "--sig-proxy",
            "--quiet", "--disable-content-trust", "--help", "--use-api-socket");

    private final InstanceId instance;

    public DockerRunRewriter(InstanceId instance) {
        this.instance = instance;
    }

    public ChildSpec rewrite(ChildSpec spec) {
        List<String> argv = spec.argv();
        return runFlagsStart(argv).map(at -> {
            List<String> userFlags = argv.subList(at, argv.size());
            List<String> options = userFlags.subList(0, imageIndex(userFlags));
            Optional<String> userName = userName(options);
            String name = userName.orElseGet(() -> spec.fence().map(DockerLabels::fencedName)
                    .orElseGet(() -> DockerLabels.containerName(instance.value(), spec.id())));
            List<String> added = new ArrayList<>();
            if (userName.isEmpty()) {
                added.addAll(List.of("--name", name));
            }
            added.addAll(List.of("--label", DockerLabels.INSTANCE + "=" + instance.value(),
                    "--label", DockerLabels.SESSION + "=" + spec.id()));
            spec.fence().ifPresent(fence -> added.addAll(List.of("--label", DockerLabels.CONNECTION + "=" + fence)));
            if (options.stream().noneMatch(flag -> flag.equals("--init") || flag.startsWith("--init="))) {
                added.add("--init");
            }
            List<String> rewritten = new ArrayList<>(argv.subList(0, at));
            rewritten.addAll(added);
            rewritten.addAll(userFlags);
            return spec.withArgv(rewritten, name);
        }).orElse(spec);
    }

    /** Index of the first argument after {@code run} / {@code container run}, if argv is a docker run. */
    static Optional<Integer> runFlagsStart(List<String> argv) {
        String program = Path.of(argv.get(0)).getFileName().toString();
        if (!program.equals("docker")) {
            return Optional.empty();
        }
        int i = 1;
        while (i < argv.size() && argv.get(i).startsWith("-")) {
            i += GLOBAL_OPTIONS_WITH_VALUE.contains(argv.get(i)) ? 2 : 1;
        }
        if (i < argv.size() && argv.get(i).equals("container")) {
            i++;
        }
        return i < argv.size() && argv.get(i).equals("run") ? Optional.of(i + 1) : Optional.empty();
    }

    /** Index of the image among the run flags: the first argument that is neither an option nor its value. */
    static int imageIndex(List<String> flags) {
        int i = 0;
        while (i < flags.size() && flags.get(i).startsWith("-")) {
            i += takesNextArgument(flags.get(i)) ? 2 : 1;
        }
        return Math.min(i, flags.size());
    }

    /**
     * Whether a run option's value is the next argument. Not for a boolean, nor {@code --opt=value}; in a cluster
     * of one-letter options ({@code -it}, {@code -ie}, {@code -eTOKEN}, {@code -p8080:80}) only when the first
     * letter that takes a value is the last one, as the rest of the cluster is otherwise its value.
     */
    private static boolean takesNextArgument(String flag) {
        if (flag.contains("=") || BOOLEAN_RUN_OPTIONS.contains(flag)) {
            return false;
        }
        if (flag.startsWith("--")) {
            return true;
        }
        String letters = flag.substring(1);
        for (int i = 0; i < letters.length(); i++) {
            if ("itdPq".indexOf(letters.charAt(i)) < 0) {
                return i == letters.length() - 1;
            }
        }
        return false;
    }

    private static Optional<String> userName(List<String> options) {
        for (int i = 0; i < options.size(); i++) {
            String option = options.get(i);
            if (option.equals("--name") && i + 1 < options.size()) {
                return Optional.of(options.get(i + 1));
            }
            if (option.startsWith("--name=")) {
                return Optional.of(option.substring("--name=".length()));
            }
        }
        return Optional.empty();
    }
}
