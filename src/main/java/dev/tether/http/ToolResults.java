package dev.tether.http;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/** Executor's {@code ToolResult} shapes, as code sees them. */
public final class ToolResults {

    private ToolResults() {
    }

    public static Map<String, Object> ok(@Nullable Object data, HttpAnswer answer) {
        Map<String, Object> http = new LinkedHashMap<>();
        http.put("status", answer.status());
        http.put("headers", answer.headers());
        Map<String, Object> ok = new LinkedHashMap<>();
        ok.put("ok", true);
        ok.put("data", data);
        ok.put("http", http);
        return ok;
    }

    public static Map<String, Object> fail(String code, @Nullable String message, @Nullable Integer status, @Nullable Object details) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", message);
        if (status != null) {
            error.put("status", status);
        }
        if (details != null) {
            error.put("details", details);
        }
        Map<String, Object> failure = new LinkedHashMap<>();
        failure.put("ok", false);
        failure.put("error", error);
        return failure;
    }

    /** Executor's pick of a message from an error body: its {@code message}, {@code error}, {@code detail}, ... */
    public static String upstreamMessage(@Nullable Object body, int status) {
        if (body instanceof String text && !text.isEmpty()) {
            return text;
        }
        if (body instanceof Map<?, ?> map) {
            for (String key : new String[] { "message", "error", "detail", "title", "description" }) {
                if (map.get(key) instanceof String text && !text.isEmpty()) {
                    return text;
                }
                if (map.get(key) instanceof Map<?, ?> nested && nested.get("message") instanceof String text && !text.isEmpty()) {
                    return text;
                }
            }
        }
        return "Upstream returned HTTP " + status;
    }
}
