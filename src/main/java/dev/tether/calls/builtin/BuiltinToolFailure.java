package dev.tether.calls.builtin;

import org.jspecify.annotations.Nullable;

/**
 * A listed built-in that ran and failed in a way Executor names: code receives {@code {ok: false, error: {code,
 * message}}} (e.g. {@code openapi_parse_failed}), not a thrown "Internal tool error". Failures Executor does not name
 * are left to propagate: code sees those as the opaque internal error, as on Executor.
 */
public final class BuiltinToolFailure extends RuntimeException {

    private final String code;

    public BuiltinToolFailure(String code, @Nullable String message) {
        super(message);
        this.code = code;
    }

    public String code() {
        return code;
    }
}
