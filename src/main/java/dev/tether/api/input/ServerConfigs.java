package dev.tether.api.input;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

import dev.tether.store.RemoteConfig;
import dev.tether.store.RemoteConfig.RemoteTransport;
import dev.tether.store.ServerConfig;
import dev.tether.store.StdioConfig;

/** Server configs as the API reads and shows them. Environment, header and query values never leave the daemon. */
public final class ServerConfigs {

    public static final String MASK = "********";

    /** The fields of a stdio or remote server config in a request body. */
    public record ConfigInput(String transport, String command, List<String> args, Map<String, String> env, String cwd,
            String endpoint, String remoteTransport, Map<String, String> queryParams, Map<String, String> headers) {
    }

    private ServerConfigs() {
    }

    /** Validates a config; a missing {@code transport} means remote, as in Executor. */
    public static ServerConfig parse(ConfigInput input) {
        String transport = input.transport() == null ? "remote" : input.transport();
        if (transport.equals("stdio")) {
            String command = Inputs.requireText(input.command(), "command");
            List<String> args = input.args();
            if (args != null && args.stream().anyMatch(arg -> arg == null)) {
                throw InvalidInputException.decode("`args` must be an array of strings");
            }
            // The OS cannot take a NUL in a command line: refused now, not when the child is started.
            if (command.indexOf('\0') >= 0 || args != null && args.stream().anyMatch(arg -> arg.indexOf('\0') >= 0)
                    || input.cwd() != null && input.cwd().indexOf('\0') >= 0) {
                throw InvalidInputException.decode("`command`, `args` and `cwd` must not contain NUL");
            }
            return new StdioConfig(command, args, Inputs.envMap(input.env(), "env"), input.cwd());
        }
        if (!transport.equals("remote")) {
            throw InvalidInputException.decode("`transport` must be \"stdio\" or \"remote\", was \"" + transport + "\"");
        }
        String endpoint = Inputs.requireText(input.endpoint(), "endpoint");
        checkHttpUrl(endpoint);
        RemoteTransport remoteTransport = input.remoteTransport() == null ? RemoteTransport.AUTO
                : RemoteTransport.parse(input.remoteTransport()).orElseThrow(() -> InvalidInputException.decode(
                        "`remoteTransport` must be \"streamable-http\", \"sse\" or \"auto\", was \"" + input.remoteTransport() + "\""));
        return new RemoteConfig(endpoint, remoteTransport, Inputs.stringMap(input.queryParams(), "queryParams"),
                Inputs.headerMap(input.headers(), "headers"));
    }

    public static void checkHttpUrl(String endpoint) {
        try {
            URI uri = URI.create(endpoint);
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
                throw InvalidInputException.decode("`endpoint` must be an http(s) URL, was \"" + endpoint + "\"");
            }
        }
        catch (IllegalArgumentException ex) {
            throw InvalidInputException.decode("`endpoint` is not a valid URL: \"" + endpoint + "\"");
        }
    }

    public static Map<String, Object> view(ServerConfig config) {
        Map<String, Object> shown = new LinkedHashMap<>();
        shown.put("transport", config.transport());
        if (config instanceof StdioConfig stdio) {
            // Executor answers the config as it was given: a field the client left out is left out here too.
            shown.put("command", stdio.command());
            putIfGiven(shown, stdio.given("args"), "args", stdio.args());
            putIfGiven(shown, stdio.given("env"), "env", masked(stdio.env()));
            putIfGiven(shown, stdio.given("cwd"), "cwd", stdio.cwd());
        }
        else if (config instanceof RemoteConfig remote) {
            shown.put("endpoint", remote.endpoint());
            shown.put("remoteTransport", remote.remoteTransport().wire());
            // Query values carry API keys as often as headers do.
            putIfGiven(shown, remote.given("queryParams"), "queryParams", masked(remote.queryParams()));
            putIfGiven(shown, remote.given("headers"), "headers", masked(remote.headers()));
            shown.put("authenticationTemplate", remote.authenticationTemplate());
        }
        return shown;
    }

    private static void putIfGiven(Map<String, Object> shown, boolean given, String field, @Nullable Object value) {
        if (given) {
            shown.put(field, value);
        }
    }

    /** Which variables, headers or query parameters are set, never what they hold. */
    public static Map<String, String> masked(Map<String, String> values) {
        Map<String, String> masked = new TreeMap<>();
        values.keySet().forEach(key -> masked.put(key, MASK));
        return masked;
    }
}
