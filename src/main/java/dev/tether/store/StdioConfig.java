package dev.tether.store;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How an MCP server integration is started. {@code env} values may be secrets: they are never returned
 * by the API nor logged.
 */
public record StdioConfig(String command, List<String> args, Map<String, String> env, String cwd) {

    public StdioConfig {
        Objects.requireNonNull(command, "command");
        args = args == null ? List.of() : List.copyOf(args);
        env = env == null ? Map.of() : Map.copyOf(env);
    }
}
