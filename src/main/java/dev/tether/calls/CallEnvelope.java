package dev.tether.calls;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.tether.http.ToolResults;

/**
 * Executor's envelope around what a tool call gives code: {@code {ok: true, data}} or
 * {@code {ok: false, error: {code, message, details?}}}, for the calls that ran ({@link ToolCalls}) and for those
 * an execution refused before they ran. A failure is written by {@link ToolResults}, as an HTTP source's is.
 */
public final class CallEnvelope {

    private CallEnvelope() {
    }

    public static Map<String, Object> ok(@Nullable Object data) {
        Map<String, Object> ok = new LinkedHashMap<>();
        ok.put("ok", true);
        ok.put("data", data);
        return ok;
    }

    /** {@code details} is left out when null, as Executor leaves it out. */
    public static Map<String, Object> failure(String code, @Nullable String message, @Nullable Object details) {
        return ToolResults.fail(code, message, null, details);
    }
}
