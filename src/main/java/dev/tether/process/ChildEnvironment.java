package dev.tether.process;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The whole environment of a stdio child, built in this one place. A child does not inherit the daemon's
 * environment: that holds the API token, the store's password and whatever else the operator gave Tether. It
 * gets what a program needs to run at all ({@code PATH}, {@code HOME}, locale and time zone), what a
 * {@code docker} client needs to find its engine, the names the operator lists in
 * {@code tether.process.pass-env}, and on top of those what the server's config and the connection's
 * credentials set.
 *
 * <p>Names starting with {@code TETHER_} or {@code SPRING_} are never taken from the daemon's environment, even
 * when listed: they configure Tether and may hold its secrets. A server config may still set such a name for
 * its own child: that value is the config's, not the daemon's.
 */
final class ChildEnvironment {

    /** What any program expects, plus Windows' essentials (harmless elsewhere). */
    static final Set<String> BASE = Set.of("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR",
            "TERM", "XDG_RUNTIME_DIR", "SYSTEMROOT", "SystemRoot", "COMSPEC", "PATHEXT", "WINDIR", "USERPROFILE", "APPDATA",
            "LOCALAPPDATA", "TEMP", "TMP", "ProgramData", "ProgramFiles");

    /** What the {@code docker} CLI reads to find and authenticate to its engine. */
    static final Set<String> DOCKER = Set.of("DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT", "DOCKER_CERT_PATH",
            "DOCKER_TLS_VERIFY", "DOCKER_TLS", "DOCKER_API_VERSION", "DOCKER_DEFAULT_PLATFORM", "DOCKER_CLI_HINTS");

    private static final List<String> NEVER = List.of("TETHER_", "SPRING_");

    private final Map<String, String> inherited;

    /**
     * @param parent      the daemon's environment ({@link System#getenv()} in production; tests pass their own)
     * @param passThrough further names to take from {@code parent}
     */
    ChildEnvironment(Map<String, String> parent, List<String> passThrough) {
        Map<String, String> kept = new LinkedHashMap<>();
        parent.forEach((name, value) -> {
            if (!forbidden(name) && (BASE.contains(name) || DOCKER.contains(name) || name.startsWith("LC_")
                    || passThrough.contains(name))) {
                kept.put(name, value);
            }
        });
        this.inherited = Map.copyOf(kept);
    }

    /** What the child of {@code spec} gets: the inherited names, overridden by the spec's own. */
    Map<String, String> of(ChildSpec spec) {
        Map<String, String> env = new LinkedHashMap<>(inherited);
        env.putAll(spec.env());
        return env;
    }

    static boolean forbidden(String name) {
        String upper = name.toUpperCase(Locale.ROOT);
        return NEVER.stream().anyMatch(upper::startsWith);
    }
}
