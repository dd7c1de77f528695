package dev.tether.execution;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.tether.calls.CallEnvelope;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import org.jspecify.annotations.Nullable;

/**
 * What {@code await tools.…(args)} gives the code, as Executor gives it: what {@link dev.tether.calls.ToolCalls#invoke}
 * answers for a call that ran, or {@code {ok: false, error: {code, message, details}}} for one that did not (an
 * unknown tool, a blocked call; written by {@link CallEnvelope}). Only infrastructure failures reject the promise.
 */
final class ToolEnvelopes {

    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();
    private static final TypeRef<Map<String, Object>> MAP = new TypeRef<>() {
    };

    private ToolEnvelopes() {
    }

    /** What {@link dev.tether.calls.ToolCalls#invoke} answered, as the JSON the code receives. */
    static String of(Object answer) {
        return write(answer);
    }

    static String notFound(String path, List<String> suggestions) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("path", path);
        details.put("suggestions", suggestions);
        return failure("tool_not_found", "Tool not found: " + path, details);
    }

    static String blocked(String path, @Nullable String pattern) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("address", "tools." + path);
        details.put("pattern", pattern);
        details.put("_tag", "ToolBlockedError");
        return failure("tool_blocked", "Tool blocked by policy: " + path, details);
    }

    static String invalidArguments(String message) {
        return failure("invalid_tool_arguments", message, null);
    }

    private static String failure(String code, String message, @Nullable Object details) {
        return write(CallEnvelope.failure(code, message, details));
    }

    private static String write(Object value) {
        try {
            return JSON.writeValueAsString(value);
        }
        catch (java.io.IOException ex) {
            throw new IllegalStateException("a tool result could not be written as JSON", ex);
        }
    }
}
