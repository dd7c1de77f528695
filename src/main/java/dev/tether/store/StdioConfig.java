package dev.tether.store;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/** A server started as a stdio child. {@code env} values may be secrets: the API masks them. */
public record StdioConfig(String command, List<String> args, Map<String, String> env, String cwd) implements ServerConfig {

    public StdioConfig {
        Objects.requireNonNull(command, "command");
        args = args == null ? List.of() : List.copyOf(args);
        env = env == null ? Map.of() : Map.copyOf(env);
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
