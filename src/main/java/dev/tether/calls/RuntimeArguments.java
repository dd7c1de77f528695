package dev.tether.calls;

import java.util.Map;
import java.util.Optional;

import dev.tether.calls.builtin.InvalidToolArgumentsException;
import org.jspecify.annotations.Nullable;

/**
 * The arguments of the code runtime's helpers, refused with the very messages Executor 1.5.9 throws into code, so
 * an agent that learnt from one reads the same from the other.
 */
final class RuntimeArguments {

    private static final int DEFAULT_LIMIT = 12;

    record Search(String query, Optional<String> namespace, int limit, int offset) {
    }

    record Sources(Optional<String> query, int limit, int offset) {
    }

    private RuntimeArguments() {
    }

    static Search search(Object arguments) {
        if (!(arguments instanceof Map<?, ?> args)) {
            throw new InvalidToolArgumentsException(
                    "tools.search expects an object: { query?: string; namespace?: string; limit?: number; offset?: number }");
        }
        Optional<String> query = text(args.get("query"), "tools.search query must be a string when provided");
        Optional<String> namespace = text(args.get("namespace"), "tools.search namespace must be a string when provided");
        return new Search(query.orElse(""), namespace, limit(args.get("limit"), "tools.search"), offset(args.get("offset"), "tools.search"));
    }

    static Sources sources(Object arguments) {
        String name = "tools.executor.sources.list";
        if (arguments != null && !(arguments instanceof Map<?, ?>)) {
            throw new InvalidToolArgumentsException(name + " expects an object: { query?: string; limit?: number; offset?: number }");
        }
        Map<?, ?> args = arguments == null ? Map.of() : (Map<?, ?>) arguments;
        return new Sources(text(args.get("query"), name + " query must be a string when provided"),
                limit(args.get("limit"), name), offset(args.get("offset"), name));
    }

    static String describe(Object arguments) {
        if (!(arguments instanceof Map<?, ?> args)) {
            throw new InvalidToolArgumentsException("tools.describe.tool expects an object: { path: string }");
        }
        if (!(args.get("path") instanceof String path) || path.isBlank()) {
            throw new InvalidToolArgumentsException("describe.tool requires a path");
        }
        if (args.containsKey("includeSchemas")) {
            throw new InvalidToolArgumentsException("tools.describe.tool no longer accepts includeSchemas");
        }
        return path;
    }

    private static Optional<String> text(@Nullable Object value, String refusal) {
        if (value == null) {
            return Optional.empty();
        }
        if (!(value instanceof String text)) {
            throw new InvalidToolArgumentsException(refusal);
        }
        return Optional.of(text);
    }

    private static int limit(@Nullable Object value, String name) {
        if (value == null) {
            return DEFAULT_LIMIT;
        }
        if (!(value instanceof Number number) || !Double.isFinite(number.doubleValue()) || number.doubleValue() <= 0) {
            throw new InvalidToolArgumentsException(name + " limit must be a positive number when provided");
        }
        return (int) Math.min(Integer.MAX_VALUE, Math.floor(number.doubleValue()));
    }

    private static int offset(@Nullable Object value, String name) {
        if (value == null) {
            return 0;
        }
        if (!(value instanceof Number number) || !Double.isFinite(number.doubleValue()) || number.doubleValue() < 0) {
            throw new InvalidToolArgumentsException(name + " offset must be a non-negative number when provided");
        }
        return (int) Math.min(Integer.MAX_VALUE, Math.floor(number.doubleValue()));
    }
}
