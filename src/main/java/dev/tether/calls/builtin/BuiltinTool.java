package dev.tether.calls.builtin;

import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.tether.views.Views.ToolView;

/**
 * A tool Tether itself provides under Executor's built-in {@code executor} integration.
 *
 * @param path             how code reaches it under {@code tools.}, e.g. {@code executor.coreTools.connections.list}
 * @param name             Executor's name for it, e.g. {@code coreTools.connections.list}
 * @param pluginId         the Executor plugin that provides it, e.g. {@code core-tools}
 * @param requiresApproval Executor's annotation: true where a call needs approval, null where it says nothing
 * @param approvalDescription what Executor's approval prompt says the call does, null where it needs none
 * @param inputSchema      JSON schema of its arguments, null where it takes none
 * @param outputSchema     JSON schema of its answer
 * @param runtime          one of the code runtime's own helpers ({@code search}, {@code describe.tool},
 *                         {@code executor.sources.list}): not listed by {@code GET /api/tools}, and its answer
 *                         reaches code as it is, where a listed tool's comes wrapped in {@code {ok, data}}
 */
public record BuiltinTool(String path, String name, String pluginId, String description, @Nullable Boolean requiresApproval,
        @Nullable String approvalDescription, @Nullable Map<String, Object> inputSchema, @Nullable Map<String, Object> outputSchema,
        boolean runtime) {

    /** The built-in integration's slug, and the connection that every listed built-in belongs to. */
    public static final String INTEGRATION = "executor";
    public static final String CONNECTION = "coreTools";
    public static final String OWNER = "user";

    /** As Executor lists a built-in: under the {@code executor} integration, static. */
    public ToolView listing() {
        return new ToolView(path, OWNER, INTEGRATION, CONNECTION, name, pluginId, description, null, requiresApproval,
                approvalDescription, true);
    }
}
