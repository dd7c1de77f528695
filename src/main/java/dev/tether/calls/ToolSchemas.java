package dev.tether.calls;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.calls.builtin.BuiltinTool;
import dev.tether.calls.builtin.BuiltinTools;
import dev.tether.calls.builtin.TypeScriptShapes;
import dev.tether.store.StoredTool;

/**
 * What {@code GET /api/tools/schema} answers for a tool, as Executor 1.5.9 does: its JSON schemas and their TypeScript
 * renderings. An MCP tool's output is Executor's schema of an MCP {@code CallToolResult} (the MCP SDK's, kept in
 * {@code mcp-call-tool-result.schema.json}) with the server's structured content schema in place; a built-in's is its
 * data. A built-in's answer has no {@code schemaDefinitions}; an MCP tool's has it {@code null}, as MCP servers share
 * no definitions.
 */
@Component
public final class ToolSchemas {

    private final ToolCalls calls;
    private final BuiltinTools builtins;
    private final Map<String, Object> callToolResult;

    public ToolSchemas(ToolCalls calls, BuiltinTools builtins, JsonMapper json) {
        this.calls = calls;
        this.builtins = builtins;
        try (InputStream in = ToolSchemas.class.getResourceAsStream("mcp-call-tool-result.schema.json")) {
            if (in == null) {
                throw new IllegalStateException("mcp-call-tool-result.schema.json is missing beside " + ToolSchemas.class.getName());
            }
            this.callToolResult = json.readValue(in, new TypeReference<LinkedHashMap<String, Object>>() { });
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** The schema answer for the tool at {@code address}; fails with {@link ToolNotFoundException} when there is none. */
    public Mono<Map<String, Object>> schema(String address) {
        Optional<BuiltinTool> builtin = builtins.find(ToolAddress.path(address)).filter(tool -> !tool.runtime());
        if (builtin.isPresent()) {
            BuiltinTool tool = builtin.get();
            return Mono.just(view(address, tool.name(), tool.description(), tool.inputSchema(), tool.outputSchema(), false));
        }
        return calls.find(address).map(tool -> view(address, tool.name(), tool.description(), tool.inputSchema(),
                callToolResult(tool), true));
    }

    /** Executor's MCP output schema: the result's schema, with the tool's structured content where it declares one. */
    private Map<String, Object> callToolResult(StoredTool tool) {
        Map<String, Object> schema = new LinkedHashMap<>(callToolResult);
        if (tool.outputSchema() != null) {
            @SuppressWarnings("unchecked")
            Map<String, Object> properties = new LinkedHashMap<>((Map<String, Object>) schema.get("properties"));
            properties.put("structuredContent", tool.outputSchema());
            schema.put("properties", properties);
            schema.put("required", List.of("content", "structuredContent"));
        }
        return schema;
    }

    private static Map<String, Object> view(String address, String name, String description, @Nullable Map<String, Object> input,
            @Nullable Map<String, Object> output, boolean mcp) {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("address", address);
        view.put("name", name);
        view.put("description", description);
        view.put("inputSchema", input);
        view.put("outputSchema", output);
        if (mcp) {
            view.put("schemaDefinitions", null);
        }
        view.put("inputTypeScript", TypeScriptShapes.of(input));
        view.put("outputTypeScript", TypeScriptShapes.of(output));
        view.put("typeScriptDefinitions", null);
        return view;
    }
}
