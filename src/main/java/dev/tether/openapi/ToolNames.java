package dev.tether.openapi;

import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * The words of a tool's name as Executor 1.5.9's OpenAPI plugin makes them ({@code definitions.ts}): a group from a
 * path when there is no tag, a leaf from the {@code operationId} or the method and path, camel and Pascal case.
 */
final class ToolNames {

    private static final Pattern VERSION = Pattern.compile("^v\\d+(?:[._-]\\d+)?$", Pattern.CASE_INSENSITIVE);

    private ToolNames() {
    }

    static @Nullable String versionSegment(String path) {
        return segments(path).stream().map(s -> s.toLowerCase(Locale.ROOT)).filter(s -> VERSION.matcher(s).matches()).findFirst().orElse(null);
    }

    static String pathGroup(String path) {
        for (String segment : segments(path)) {
            String lower = segment.toLowerCase(Locale.ROOT);
            if (VERSION.matcher(lower).matches() || lower.equals("api") || isParameter(segment)) {
                continue;
            }
            return camel(segment);
        }
        return "root";
    }

    static String leaf(String operationId, String method, String path, String group) {
        String preferred = camel(leafSeed(operationId, group));
        if (!preferred.isEmpty() && !preferred.equals(group)) {
            return preferred;
        }
        String suffix = String.join("", segments(path).stream()
                .filter(s -> !VERSION.matcher(s.toLowerCase(Locale.ROOT)).matches())
                .filter(s -> !s.equalsIgnoreCase("api"))
                .filter(s -> !isParameter(s))
                .map(ToolNames::camel)
                .filter(s -> !s.equals(group))
                .map(ToolNames::pascal).toList());
        return camel(method + (suffix.isEmpty() ? "Operation" : suffix));
    }

    private static String leafSeed(String operationId, String group) {
        List<String> segments = java.util.Arrays.stream(operationId.split("[/.]+")).map(String::strip).filter(s -> !s.isEmpty()).toList();
        if (segments.size() > 1 && camel(segments.get(0)).equals(group)) {
            return String.join(" ", segments.subList(1, segments.size()));
        }
        return operationId;
    }

    private static List<String> segments(String path) {
        return java.util.Arrays.stream(path.split("/")).map(String::strip).filter(s -> !s.isEmpty()).toList();
    }

    private static boolean isParameter(String segment) {
        return segment.startsWith("{") && segment.endsWith("}");
    }

    private static List<String> words(String value) {
        String spaced = value.replaceAll("([a-z0-9])([A-Z])", "$1 $2")
                .replaceAll("([A-Z]+)([A-Z][a-z0-9]+)", "$1 $2")
                .replaceAll("[^a-zA-Z0-9]+", " ")
                .strip();
        return spaced.isEmpty() ? List.of() : List.of(spaced.split("\\s+"));
    }

    static String camel(String value) {
        List<String> words = words(value).stream().map(w -> w.toLowerCase(Locale.ROOT)).toList();
        if (words.isEmpty()) {
            return "tool";
        }
        StringBuilder camel = new StringBuilder(words.get(0));
        words.subList(1, words.size()).forEach(w -> camel.append(Character.toUpperCase(w.charAt(0))).append(w.substring(1)));
        return camel.toString();
    }

    static String pascal(String value) {
        String camel = camel(value);
        return Character.toUpperCase(camel.charAt(0)) + camel.substring(1);
    }
}
