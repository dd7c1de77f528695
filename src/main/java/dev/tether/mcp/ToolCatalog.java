package dev.tether.mcp;

import java.util.List;
import java.util.Optional;

import io.modelcontextprotocol.spec.McpSchema.Tool;

/**
 * The tools a server listed.
 *
 * @param tools            every tool of every page that arrived
 * @param incompleteReason why some pages are missing, or empty when the listing reached its end
 */
public record ToolCatalog(List<Tool> tools, Optional<String> incompleteReason) {

    public ToolCatalog {
        tools = List.copyOf(tools);
    }

    public boolean complete() {
        return incompleteReason.isEmpty();
    }
}
