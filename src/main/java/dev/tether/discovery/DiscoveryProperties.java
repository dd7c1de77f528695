package dev.tether.discovery;

import java.nio.file.Path;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How Executor's CLI finds Tether: the record that Executor's own daemon leaves for its CLI.
 *
 * @param enabled         write the record at start and remove it at stop; default true
 * @param executorDataDir where Executor's CLI looks for it; default {@code EXECUTOR_DATA_DIR}, as the CLI reads it, else
 *                        {@code ~/.executor}
 * @param host            the host of the origin written into the record, which must be the one the CLI is pointed at
 *                        ({@code 127.0.0.1} and {@code localhost} are different origins to it); default {@code 127.0.0.1}
 */
@ConfigurationProperties("tether.discovery")
public record DiscoveryProperties(Boolean enabled, Path executorDataDir, String host) {

    public DiscoveryProperties {
        enabled = enabled == null || enabled;
        executorDataDir = executorDataDir != null ? executorDataDir : defaultDataDir(System.getenv("EXECUTOR_DATA_DIR"));
        host = host == null || host.isBlank() ? "127.0.0.1" : host;
        if (host.contains("/") || host.contains(" ")) {
            throw new IllegalArgumentException("tether.discovery.host must be a host name or address, was " + host);
        }
    }

    static Path defaultDataDir(String executorDataDir) {
        return executorDataDir != null && !executorDataDir.isBlank() ? Path.of(executorDataDir)
                : Path.of(System.getProperty("user.home"), ".executor");
    }
}
