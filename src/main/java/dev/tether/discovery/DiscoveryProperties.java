package dev.tether.discovery;

import java.nio.file.Path;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How Executor's CLI finds Tether: the record that Executor's own daemon leaves for its CLI.
 *
 * @param enabled         write the record at start and remove it at stop; default true
 * @param executorDataDir where Executor's CLI looks for it; default {@code EXECUTOR_DATA_DIR}, as the CLI reads it, else
 *                        {@code .executor} in the home directory as the CLI (Node's {@code os.homedir()}) finds it:
 *                        {@code HOME} when set, else the account's home ({@code user.home})
 * @param host            the host of the origin written into the record, which must be the one the CLI is pointed at
 *                        ({@code 127.0.0.1} and {@code localhost} are different origins to it); default {@code 127.0.0.1}
 * @param exclusive       own the data dir as Executor's servers do: refuse to start while another live server's record
 *                        or start-up lock ({@code server-control/startup.lock}) is there, clear a dead one's, and hold
 *                        the lock until the record is written; default false ({@code bin/executor-sidecar} sets it)
 * @param scopeDir        the scope dir written into the record (Executor's {@code EXECUTOR_SCOPE_DIR}); default none
 */
@ConfigurationProperties("tether.discovery")
public record DiscoveryProperties(Boolean enabled, Path executorDataDir, String host, Boolean exclusive,
        @Nullable Path scopeDir) {

    public DiscoveryProperties {
        enabled = enabled == null || enabled;
        executorDataDir = executorDataDir != null ? executorDataDir
                : defaultDataDir(System.getenv("EXECUTOR_DATA_DIR"), System.getenv("HOME"));
        exclusive = exclusive != null && exclusive;
        host = host == null || host.isBlank() ? "127.0.0.1" : host;
        if (host.contains("/") || host.contains(" ")) {
            throw new IllegalArgumentException("tether.discovery.host must be a host name or address, was " + host);
        }
    }

    /** Node's rule, which Executor's CLI follows: {@code HOME} if set and not empty, else the account's home. */
    static Path defaultDataDir(@Nullable String executorDataDir, @Nullable String home) {
        if (executorDataDir != null && !executorDataDir.isBlank()) {
            return Path.of(executorDataDir);
        }
        return Path.of(home != null && !home.isEmpty() ? home : System.getProperty("user.home"), ".executor");
    }
}
