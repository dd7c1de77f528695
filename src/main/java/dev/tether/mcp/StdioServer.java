package dev.tether.mcp;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * How to start an MCP server as a stdio child.
 *
 * @param name    the server's name, used in errors and logs
 * @param command the program
 * @param args    its arguments
 * @param env     extra environment variables; values are secrets
 * @param cwd     working directory, if not the daemon's
 */
public record StdioServer(String name, String command, List<String> args, Map<String, String> env, Optional<Path> cwd)
        implements McpServer {

    public StdioServer {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(command, "command");
        args = args == null ? List.of() : List.copyOf(args);
        env = env == null ? Map.of() : Map.copyOf(env);
        cwd = cwd == null ? Optional.empty() : cwd;
    }

    public static StdioServer of(String name, List<String> argv) {
        return new StdioServer(name, argv.get(0), argv.subList(1, argv.size()), Map.of(), Optional.empty());
    }

    /** Names of variables only: values are secrets. */
    @Override
    public String toString() {
        return "StdioServer[" + name + ": " + command + " " + args + ", env=" + env.keySet() + "=***]";
    }
}
