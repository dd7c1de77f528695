package dev.tether.calls.builtin;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import tools.jackson.databind.json.JsonMapper;

/**
 * A JSON schema as a compact TypeScript type, the way {@code tools.describe.tool()} shows shapes to code:
 * {@code {"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}} is
 * {@code { message: string; }}. What TypeScript cannot say ({@code $ref}, formats, bounds) becomes {@code unknown}
 * or is left out.
 */
public final class TypeScriptShapes {

    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*");
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int MAX_DEPTH = 12;

    private TypeScriptShapes() {
    }

    /** The type of a value that matches {@code schema}; null for a null schema. */
    public static String of(Map<String, Object> schema) {
        return schema == null ? null : render(schema, 0);
    }

    private static String render(Object node, int depth) {
        if (!(node instanceof Map<?, ?> schema) || depth > MAX_DEPTH) {
            return "unknown";
        }
        if (schema.containsKey("const")) {
            return JSON.writeValueAsString(schema.get("const"));
        }
        if (schema.get("enum") instanceof List<?> values && !values.isEmpty()) {
            return String.join(" | ", values.stream().map(JSON::writeValueAsString).toList());
        }
        for (String union : List.of("anyOf", "oneOf")) {
            if (schema.get(union) instanceof List<?> members && !members.isEmpty()) {
                return union(members.stream().map(member -> render(member, depth + 1)).toList());
            }
        }
        if (schema.get("allOf") instanceof List<?> members && !members.isEmpty()) {
            return String.join(" & ", members.stream().map(member -> parenthesized(render(member, depth + 1))).toList());
        }
        Object type = schema.get("type");
        if (type instanceof List<?> types) {
            return union(types.stream().map(one -> typed(schema, String.valueOf(one), depth)).toList());
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
            case "array" -> schema.containsKey("items") ? parenthesized(render(schema.get("items"), depth + 1)) + "[]" : "unknown[]";
            case "object" -> object(schema, depth);
            default -> "unknown";
        };
    }

    private static String object(Map<?, ?> schema, int depth) {
        Map<?, ?> properties = schema.get("properties") instanceof Map<?, ?> given ? given : Map.of();
        Set<Object> required = schema.get("required") instanceof List<?> names ? Set.copyOf(names) : Set.of();
        List<String> members = new ArrayList<>();
        properties.forEach((name, property) -> members.add(key(String.valueOf(name)) + (required.contains(name) ? "" : "?")
                + ": " + render(property, depth + 1) + ";"));
        Object additional = schema.get("additionalProperties");
        boolean open = additional == null ? properties.isEmpty() : !Boolean.FALSE.equals(additional);
        if (open) {
            members.add("[k: string]: " + (additional instanceof Map<?, ?> ? render(additional, depth + 1) : "unknown") + ";");
        }
        return members.isEmpty() ? "{}" : "{ " + String.join(" ", members) + " }";
    }

    private static String union(List<String> members) {
        Set<String> distinct = new LinkedHashSet<>(members);
        return distinct.contains("unknown") ? "unknown" : String.join(" | ", distinct);
    }

    /** {@code (a | b)} where a union would otherwise bind wrongly, as the element type of an array. */
    private static String parenthesized(String type) {
        return hasTopLevelOperator(type) ? "(" + type + ")" : type;
    }

    /** Whether {@code |} or {@code &} joins the type at its outermost level, not inside braces, brackets or quotes. */
    private static boolean hasTopLevelOperator(String type) {
        int depth = 0;
        boolean quoted = false;
        for (int i = 0; i < type.length(); i++) {
            char c = type.charAt(i);
            if (quoted) {
                if (c == '\\') {
                    i++;
                }
                else if (c == '"') {
                    quoted = false;
                }
            }
            else if (c == '"') {
                quoted = true;
            }
            else if (c == '{' || c == '(' || c == '[') {
                depth++;
            }
            else if (c == '}' || c == ')' || c == ']') {
                depth--;
            }
            else if (depth == 0 && (c == '|' || c == '&')) {
                return true;
            }
        }
        return false;
    }

    private static String key(String name) {
        return IDENTIFIER.matcher(name).matches() ? name : JSON.writeValueAsString(name);
    }
}
