package dev.tether.catalog;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.modelcontextprotocol.spec.McpSchema.Tool;

import dev.tether.store.StoredTool;

/** Names tools the way Executor addresses them: sanitized like slugs, duplicates numbered. */
final class ToolNaming {

    private ToolNaming() {
    }

    static List<StoredTool> name(List<Tool> tools) {
        Set<String> taken = new HashSet<>();
        List<StoredTool> named = new ArrayList<>();
        for (Tool tool : tools) {
            String base = sanitize(tool.name());
            String name = base;
            for (int n = 2; !taken.add(name); n++) {
                name = base + "_" + n;
            }
            String description = tool.description() == null || tool.description().isBlank()
                    ? "MCP tool: " + tool.name() : tool.description();
            boolean destructive = tool.annotations() != null && Boolean.TRUE.equals(tool.annotations().destructiveHint());
            named.add(new StoredTool(name, tool.name(), description, destructive, tool.inputSchema(), tool.outputSchema()));
        }
        return named;
    }

    /** Lowercase, and every run of characters other than letters and digits becomes one {@code _}. */
    static String sanitize(String text) {
        return text.toLowerCase().replaceAll("[^a-z0-9]+", "_");
    }
}
