package dev.tether.mcp;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import io.modelcontextprotocol.spec.McpSchema.Tool;

/**
 * The tools a server listed.
 *
 * @param tools            every tool of every page that arrived
 * @param incompleteReason why some pages are missing, or empty when the listing reached its end
 * @param ttl              how long the server says its list may be kept ({@code ttlMs}, MCP 2026-07-28), if it says
 */
public record ToolCatalog(List<Tool> tools, Optional<String> incompleteReason, Optional<Duration> ttl) {

    public ToolCatalog {
        tools = List.copyOf(tools);
    }

    /** A listing of a server that says nothing of how long it may be kept. */
    public ToolCatalog(List<Tool> tools, Optional<String> incompleteReason) {
        this(tools, incompleteReason, Optional.empty());
    }

    public boolean complete() {
        return incompleteReason.isEmpty();
    }
}
