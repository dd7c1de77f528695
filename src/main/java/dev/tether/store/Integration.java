package dev.tether.store;

import java.time.Instant;
import java.util.Objects;

/**
 * A registered MCP server.
 *
 * @param slug            its unique, URL-safe name
 * @param name            its display name
 * @param description     what it is for, may be empty
 * @param config          how to reach it
 * @param configChangedAt when {@code config} last changed; a catalog synced before that is stale
 */
public record Integration(String slug, String name, String description, ServerConfig config, Instant configChangedAt) {

    public Integration {
        Objects.requireNonNull(slug, "slug");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(configChangedAt, "configChangedAt");
        description = description == null ? "" : description;
    }

    public Integration withConfig(ServerConfig newConfig, Instant changedAt) {
        return new Integration(slug, name, description, newConfig, changedAt);
    }

    public Integration withNames(String newName, String newDescription) {
        return new Integration(slug, newName == null ? name : newName, newDescription == null ? description : newDescription,
                config, configChangedAt);
    }
}
