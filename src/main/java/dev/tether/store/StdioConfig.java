package dev.tether.store;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

/**
 * A server started as a stdio child. {@code env} values may be secrets: the API masks them.
 *
 * @param omitted which of the optional fields ({@code args}, {@code env}, {@code cwd}) the client left out: Executor
 *                stores the config as it was given and its answers leave those keys out, so Tether's do too
 *                ({@link #OPTIONAL}); the other components still read as empty
 */
public record StdioConfig(String command, List<String> args, Map<String, String> env, @Nullable String cwd,
        Set<String> omitted) implements ServerConfig {

    /** The fields a client may leave out, in Executor's order. */
    public static final List<String> OPTIONAL = List.of("args", "env", "cwd");

    public StdioConfig(@Nullable String command, @Nullable List<String> args, @Nullable Map<String, String> env,
            @Nullable String cwd, Set<String> omitted) {
        Objects.requireNonNull(command, "command");
        Set<String> left = new TreeSet<>(omitted);
        if (args == null) {
            left.add("args");
        }
        if (env == null) {
            left.add("env");
        }
        if (cwd == null) {
            left.add("cwd");
        }
        left.retainAll(OPTIONAL);
        args = args == null ? List.of() : List.copyOf(args);
        env = env == null ? Map.of() : Map.copyOf(env);
        omitted = Set.copyOf(left);
        this.command = command;
        this.args = args;
        this.env = env;
        this.cwd = cwd;
        this.omitted = omitted;
    }

    /** A config whose {@code null} fields were left out. */
    public StdioConfig(@Nullable String command, @Nullable List<String> args, @Nullable Map<String, String> env, @Nullable String cwd) {
        this(command, args, env, cwd, Set.of());
    }

    /** Whether the client gave this optional field, so that an answer carries it. */
    public boolean given(String field) {
        return !omitted.contains(field);
    }

    @Override
    public String transport() {
        return "stdio";
    }

    /** Names of variables only: a config that ends up in a log line or an assertion message shows no secret. */
    @Override
    public String toString() {
        return "StdioConfig[command=" + command + ", args=" + args + ", env=" + env.keySet() + "=***, cwd=" + cwd + "]";
    }
}
