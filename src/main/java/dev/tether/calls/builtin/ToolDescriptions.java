package dev.tether.calls.builtin;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.tether.store.StoredTool;

/**
 * What {@code describe.tool} answers, in Executor 1.5.9's words and TypeScript: the code runtime's helpers describe
 * themselves, a listed built-in's answer is its {@code {ok, data}} envelope, an MCP tool's a {@code CallToolResult}
 * with the server's structured content type.
 */
public final class ToolDescriptions {

    private static final String TOOL_ERROR = "{ code: string; message: string; status?: number; details?: unknown; retryable?: boolean }";
    private static final String TOOL_HTTP_META = "{ status: number; headers: { [k: string]: string; } }";

    /** What an MCP tool's answer is, with its structured content's own type where the server declared one. */
    private static final String CALL_TOOL_RESULT = "{ content: ({ type: \"text\"; text: string; } | { type: \"image\"; data: string; mimeType: string; }"
            + " | { type: \"audio\"; data: string; mimeType: string; } | { type: \"resource_link\"; uri: string; name: string; }"
            + " | { type: \"resource\"; resource: { uri: string; mimeType?: string; text?: string; blob?: string; }; })[];"
            + " structuredContent?: %s; isError?: boolean; [k: string]: unknown; }";

    /** How the code runtime's helpers describe themselves, by path. */
    public static final Map<String, Map<String, Object>> RUNTIME = runtime();

    private ToolDescriptions() {
    }

    /** A listed built-in: its input, and its data inside Executor's result envelope. */
    public static Map<String, Object> listed(BuiltinTool tool) {
        return described(tool.path(), tool.name(), tool.description(), TypeScriptShapes.of(tool.inputSchema()),
                TypeScriptShapes.of(tool.outputSchema()));
    }

    /** A connection's MCP tool, reached as {@code path}. */
    public static Map<String, Object> mcp(String path, StoredTool tool) {
        return described(path, tool.name(), tool.description(), TypeScriptShapes.of(tool.inputSchema()),
                CALL_TOOL_RESULT.formatted(tool.outputSchema() == null ? "{ [k: string]: unknown; }" : TypeScriptShapes.of(tool.outputSchema())));
    }

    private static Map<String, Object> described(String path, String name, @Nullable String description, @Nullable String input,
            @Nullable String output) {
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("path", path);
        described.put("name", name);
        if (description != null) {
            described.put("description", description);
        }
        if (input != null) {
            described.put("inputTypeScript", input);
        }
        described.put("outputTypeScript", "{ ok: true; data: " + (output == null ? "unknown" : output)
                + "; http?: ToolHttpMeta } | { ok: false; error: ToolError }");
        described.put("typeScriptDefinitions", Map.of("ToolError", TOOL_ERROR, "ToolHttpMeta", TOOL_HTTP_META));
        return described;
    }

    private static Map<String, Map<String, Object>> runtime() {
        Map<String, Map<String, Object>> runtime = new LinkedHashMap<>();
        runtime.put("search", helper("search", "Search available Executor tools.",
                "{ query: string; namespace?: string; limit?: number; offset?: number; }",
                "{ items: ToolDiscoveryResult[]; total: number; hasMore: boolean; nextOffset: number | null; }",
                Map.of("ToolDiscoveryResult", "{ path: string; name: string; description?: string; integration: string; score: number; }")));
        runtime.put("executor.sources.list", helper("executor.sources.list", "List configured Executor integrations.",
                "{ query?: string; limit?: number; offset?: number; }",
                "{ items: ExecutorSourceListItem[]; total: number; hasMore: boolean; nextOffset: number | null; }",
                Map.of("ExecutorSourceListItem", "{ id: string; name: string; kind: string; canRemove?: boolean; canRefresh?: boolean; toolCount: number; }")));
        runtime.put("describe.tool", helper("describe.tool", "Describe a tool's compact TypeScript input and output shapes.",
                "{ path: string; }", "DescribedTool",
                Map.of("DescribedTool", "{ path: string; name: string; description?: string; inputTypeScript?: string; outputTypeScript?: string;"
                        + " typeScriptDefinitions?: { [k: string]: string; }; error?: { code: \"tool_not_found\"; message: string; suggestions?: string[]; }; }")));
        return java.util.Collections.unmodifiableMap(runtime);
    }

    private static Map<String, Object> helper(String path, String description, String input, String output, Map<String, String> definitions) {
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("path", path);
        described.put("name", path);
        described.put("description", description);
        described.put("inputTypeScript", input);
        described.put("outputTypeScript", output);
        described.put("typeScriptDefinitions", definitions);
        return described;
    }
}
