package dev.tether.agent.codemode;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import org.jspecify.annotations.Nullable;

import dev.tether.execution.ExecutionAnswer;

/**
 * The JSON text {@code /mcp} speaks: JSON-RPC answers written as the TypeScript SDK writes them (key order included),
 * what a request's params and a paused execution's answer say, read leniently (a shape Tether does not expect reads
 * as empty, never as a failure of the request).
 */
final class CodeModeJson {

    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();
    private static final TypeRef<Map<String, Object>> OBJECT = new TypeRef<>() {
    };
    private static final TypeRef<Object> ANY = new TypeRef<>() {
    };

    private CodeModeJson() {
    }

    /** A paused execution as the agent's side needs it: its id, and the question it asks. */
    record Paused(String executionId, Map<String, Object> interaction) {
    }

    /** The pause this answer reports; empty when the execution completed. */
    @SuppressWarnings("unchecked")
    static Optional<Paused> paused(ExecutionAnswer answer) {
        if (!"paused".equals(answer.status())) {
            return Optional.empty();
        }
        Map<String, Object> structured = parseObject(answer.structured());
        Object interaction = structured.get("interaction");
        return Optional.ofNullable(structured.get("executionId")).map(id -> new Paused(String.valueOf(id),
                interaction instanceof Map<?, ?> map ? (Map<String, Object>) map : Map.of()));
    }

    /** Any JSON value; text that is not JSON is an {@link IllegalArgumentException}. */
    static @Nullable Object parse(String text) {
        try {
            return JSON.readValue(text, ANY);
        } catch (IOException unreadable) {
            throw new IllegalArgumentException(unreadable);
        }
    }

    /** A request's params (or a client's result) as an object; anything else is empty. */
    static Map<String, Object> params(@Nullable Object params) {
        if (params == null) {
            return Map.of();
        }
        try {
            return JSON.convertValue(params, OBJECT);
        } catch (RuntimeException otherShape) {
            return Map.of();
        }
    }

    /** Whether {@code text} is JSON at all, for the SDK's two parse errors. */
    static boolean json(@Nullable String text) {
        try {
            JSON.readValue(text == null ? "" : text, ANY);
            return text != null;
        } catch (IOException | RuntimeException unreadable) {
            return false;
        }
    }

    static String write(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (IOException unwritable) {
            throw new IllegalStateException("cannot write JSON", unwritable);
        }
    }

    static String response(Object id, String resultJson) {
        return "{\"result\":" + resultJson + ",\"jsonrpc\":\"2.0\",\"id\":" + write(id) + "}";
    }

    static String error(@Nullable Object id, int code, String message) {
        // Key order as the SDK writes them: an answer to a request names its id first, the transport's refusals last.
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("jsonrpc", "2.0");
        if (id != null) {
            error.put("id", id);
        }
        Map<String, Object> what = new LinkedHashMap<>();
        what.put("code", code);
        what.put("message", message);
        error.put("error", what);
        if (id == null) {
            error.put("id", null);
        }
        return write(error);
    }

    private static Map<String, Object> parseObject(@Nullable String text) {
        try {
            return JSON.readValue(text, OBJECT);
        } catch (IOException | RuntimeException unreadable) {
            return Map.of();
        }
    }
}
