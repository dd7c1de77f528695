package dev.tether.discovery;

import org.jspecify.annotations.Nullable;

/**
 * Executor's {@code server-control/server.json}: which local server owns the data dir and how to reach it. The field
 * names and nesting are Executor 1.5.9's ({@code ExecutorLocalServerManifest}); its CLI rejects a record that differs.
 */
record LocalServerManifest(int version, String kind, long pid, String startedAt, String dataDir, @Nullable String scopeDir,
        Connection connection, Owner owner) {

    record Connection(String kind, String key, String origin, String apiBaseUrl, String displayName, Auth auth) {
    }

    record Auth(String kind, String token) {
    }

    record Owner(String client, String version, @Nullable String executablePath) {
    }

    static LocalServerManifest of(long pid, String startedAt, String dataDir, @Nullable String scopeDir, String origin,
            String token, String version, @Nullable String executablePath) {
        Connection connection = new Connection("http", "http:" + origin, origin, origin + "/api", "Tether",
                new Auth("bearer", token));
        return new LocalServerManifest(1, "foreground", pid, startedAt, dataDir, scopeDir, connection,
                new Owner("cli", version, executablePath));
    }
}
