package dev.tether.calls;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Executor's envelope around what a tool call gives code: {@code {ok: true, data}} or
 * {@code {ok: false, error: {code, message, details?}}}. The one place that writes it, for the calls that ran
 * ({@link ToolCalls}) and for those an execution refused before they ran.
 */
public final class CallEnvelope {

    private CallEnvelope() {
    }

    public static Map<String, Object> ok(Object data) {
        Map<String, Object> ok = new LinkedHashMap<>();
        ok.put("ok", true);
        ok.put("data", data);
        return ok;
    }

    /** {@code details} is left out when null, as Executor leaves it out. */
    public static Map<String, Object> failure(String code, String message, Object details) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", message);
        if (details != null) {
            error.put("details", details);
        }
        Map<String, Object> failure = new LinkedHashMap<>();
        failure.put("ok", false);
        failure.put("error", error);
        return failure;
    }
}
