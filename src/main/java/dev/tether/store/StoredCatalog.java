package dev.tether.store;

import java.time.Instant;
import java.util.List;

/**
 * The last good tool catalog of a connection.
 *
 * @param tools    its tools
 * @param syncedAt when it was listed
 */
public record StoredCatalog(List<StoredTool> tools, Instant syncedAt) {

    public StoredCatalog {
        tools = List.copyOf(tools);
    }
}
