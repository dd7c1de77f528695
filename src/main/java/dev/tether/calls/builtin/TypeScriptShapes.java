package dev.tether.calls.builtin;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.springframework.lang.Contract;
import tools.jackson.databind.json.JsonMapper;

/**
 * A JSON schema as a compact TypeScript type, as Executor 1.5.9 renders one for {@code tools.describe.tool()} and
 * {@code GET /api/tools/schema}: {@code {"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}
 * is {@code { message: string; }}. What TypeScript cannot say ({@code $ref}, formats, bounds) becomes {@code unknown}
 * or is left out.
 *
 * <p>Executor compiles with json-schema-to-typescript, which writes every union and intersection of two or more
 * members in parentheses, and then removes the parentheses that are redundant, except where they group an array's
 * element type; inside such a kept group it leaves everything as compiled ({@code ({ slug?: (string | null); })[]}).
 * This class renders the same way in two steps: {@link #render} with every group parenthesised, then
 * {@link #stripRedundantParentheses}.
 */
public final class TypeScriptShapes {

    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*");
    private static final Pattern IDENTIFIER_CHAR = Pattern.compile("[A-Za-z0-9_$]");
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int MAX_DEPTH = 12;

    private TypeScriptShapes() {
    }

    /** The type of a value that matches {@code schema}; null for a null schema. */
    @Contract("!null -> !null")
    public static @Nullable String of(@Nullable Map<String, Object> schema) {
        return schema == null ? null : stripRedundantParentheses(render(schema, 0));
    }

    private static String render(Object node, int depth) {
        if (!(node instanceof Map<?, ?> schema) || depth > MAX_DEPTH) {
            return "unknown";
        }
        if (schema.containsKey("const")) {
            return JSON.writeValueAsString(schema.get("const"));
        }
        if (schema.get("enum") instanceof List<?> values && !values.isEmpty()) {
            return group(values.stream().map(JSON::writeValueAsString).toList(), "|");
        }
        for (String union : List.of("anyOf", "oneOf")) {
            if (schema.get(union) instanceof List<?> members && !members.isEmpty()) {
                return group(members.stream().map(member -> render(member, depth + 1)).toList(), "|");
            }
        }
        if (schema.get("allOf") instanceof List<?> members && !members.isEmpty()) {
            return group(members.stream().map(member -> render(member, depth + 1)).toList(), "&");
        }
        Object type = schema.get("type");
        if (type instanceof List<?> types) {
            return group(types.stream().map(one -> typed(schema, String.valueOf(one), depth)).toList(), "|");
        }
        if (type instanceof String one) {
            return typed(schema, one, depth);
        }
        if (schema.containsKey("properties")) {
            return object(schema, depth);
        }
        return schema.containsKey("items") ? typed(schema, "array", depth) : "unknown";
    }

    private static String typed(Map<?, ?> schema, String type, int depth) {
        return switch (type) {
            case "string" -> "string";
            case "number", "integer" -> "number";
            case "boolean" -> "boolean";
            case "null" -> "null";
            case "array" -> schema.containsKey("items") ? render(schema.get("items"), depth + 1) + "[]" : "unknown[]";
            case "object" -> object(schema, depth);
            default -> "unknown";
        };
    }

    /** Its properties, and an index signature only where {@code additionalProperties} allows more. */
    private static String object(Map<?, ?> schema, int depth) {
        Map<?, ?> properties = schema.get("properties") instanceof Map<?, ?> given ? given : Map.of();
        Set<Object> required = schema.get("required") instanceof List<?> names ? Set.copyOf(names) : Set.of();
        List<String> members = new ArrayList<>();
        properties.forEach((name, property) -> members.add(key(String.valueOf(name)) + (required.contains(name) ? "" : "?")
                + ": " + render(property, depth + 1) + ";"));
        Object additional = schema.get("additionalProperties");
        if (additional != null && !Boolean.FALSE.equals(additional)) {
            members.add("[k: string]: " + (additional instanceof Map<?, ?> ? render(additional, depth + 1) : "unknown") + ";");
        }
        return members.isEmpty() ? "{ }" : "{ " + String.join(" ", members) + " }";
    }

    /** A union or intersection as json-schema-to-typescript writes it: in parentheses; a union with unknown is unknown. */
    private static String group(List<String> members, String operator) {
        if (operator.equals("|") && members.contains("unknown")) {
            return "unknown";
        }
        return members.size() == 1 ? members.get(0) : "(" + String.join(" " + operator + " ", members) + ")";
    }

    /**
     * Executor's {@code stripRedundantUnionParens}: a parenthesised group whose content has a top-level {@code |} loses
     * its parentheses (and is stripped within), unless an identifier precedes it or {@code [}, {@code .} or {@code <}
     * follows; a kept group is left as it is, inside too.
     */
    static String stripRedundantParentheses(String source) {
        StringBuilder output = new StringBuilder();
        int i = 0;
        while (i < source.length()) {
            char c = source.charAt(i);
            if (c == '"') {
                int end = endOfString(source, i);
                output.append(source, i, end + 1);
                i = end + 1;
                continue;
            }
            int end = c == '(' ? matchingParenthesis(source, i) : -1;
            if (end < 0) {
                output.append(c);
                i++;
                continue;
            }
            String before = source.substring(0, i).stripTrailing();
            String after = source.substring(end + 1).stripLeading();
            char previous = before.isEmpty() ? ' ' : before.charAt(before.length() - 1);
            char next = after.isEmpty() ? ' ' : after.charAt(0);
            String inner = source.substring(i + 1, end);
            boolean keep = !hasTopLevelUnion(inner) || IDENTIFIER_CHAR.matcher(String.valueOf(previous)).matches()
                    || next == '[' || next == '.' || next == '<';
            output.append(keep ? source.substring(i, end + 1) : stripRedundantParentheses(inner));
            i = end + 1;
        }
        return output.toString();
    }

    private static int endOfString(String source, int start) {
        int i = start + 1;
        while (i < source.length()) {
            char c = source.charAt(i);
            if (c == '\\') {
                i += 2;
                continue;
            }
            if (c == '"') {
                return i;
            }
            i++;
        }
        return source.length() - 1;
    }

    private static int matchingParenthesis(String source, int start) {
        int depth = 0;
        int i = start;
        while (i < source.length()) {
            char c = source.charAt(i);
            if (c == '"') {
                i = endOfString(source, i) + 1;
                continue;
            }
            if (c == '(') {
                depth++;
            }
            else if (c == ')' && --depth == 0) {
                return i;
            }
            i++;
        }
        return -1;
    }

    /** Whether {@code |} joins the type at its outermost level, not inside braces, brackets, parentheses or quotes. */
    private static boolean hasTopLevelUnion(String type) {
        int depth = 0;
        int i = 0;
        while (i < type.length()) {
            char c = type.charAt(i);
            if (c == '"') {
                i = endOfString(type, i) + 1;
                continue;
            }
            if (c == '{' || c == '(' || c == '[') {
                depth++;
            }
            else if (c == '}' || c == ')' || c == ']') {
                depth--;
            }
            else if (depth == 0 && c == '|') {
                return true;
            }
            i++;
        }
        return false;
    }

    private static String key(String name) {
        return IDENTIFIER.matcher(name).matches() ? name : JSON.writeValueAsString(name);
    }
}
