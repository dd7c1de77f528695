package dev.tether.openapi;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * References inside one OpenAPI document: {@code $ref}s followed to what they name ({@code #/...} only; the parser
 * refused any other before), and schemas made self-contained for a tool, their component references moved under
 * {@code $defs}.
 */
final class OpenApiReferences {

    private static final String SCHEMAS = "#/components/schemas/";
    private static final int MAX_REF_DEPTH = 32;

    private final Map<String, Object> doc;

    OpenApiReferences(Map<String, Object> doc) {
        this.doc = doc;
    }

    /** An object with its {@code $ref} followed inside the document (a schema's references stay references). */
    @Nullable Object resolve(@Nullable Object value) {
        Object current = value;
        for (int depth = 0; depth < MAX_REF_DEPTH; depth++) {
            if (!(current instanceof Map<?, ?> map) || !(map.get("$ref") instanceof String ref)) {
                return current;
            }
            current = pointer(ref);
        }
        return null;
    }

    private @Nullable Object pointer(String ref) {
        if (!ref.startsWith("#/")) {
            return null;
        }
        Object at = doc;
        for (String token : ref.substring(2).split("/")) {
            String key = token.replace("~1", "/").replace("~0", "~");
            if (!(at instanceof Map<?, ?> map)) {
                return null;
            }
            at = map.get(key);
        }
        return at;
    }

    /**
     * The schema with {@code #/components/schemas/X} references rewritten to {@code #/$defs/X} and the schemas they
     * reach (transitively) put under {@code $defs}, so that the schema stands alone as a tool's schema must.
     */
    @SuppressWarnings("unchecked")
    Map<String, Object> selfContained(Map<String, Object> schema) {
        Set<String> names = new LinkedHashSet<>();
        Map<String, Object> rewritten = (Map<String, Object>) rewrite(schema, names);
        if (names.isEmpty()) {
            return rewritten;
        }
        Map<String, Object> defs = new LinkedHashMap<>();
        List<String> queue = new ArrayList<>(names);
        Set<String> done = new HashSet<>();
        while (!queue.isEmpty()) {
            String name = queue.remove(0);
            if (!done.add(name)) {
                continue;
            }
            Object target = pointer(SCHEMAS + name);
            Set<String> more = new LinkedHashSet<>();
            defs.put(name, target == null ? Map.of() : rewrite(target, more));
            queue.addAll(more);
        }
        Map<String, Object> standalone = new LinkedHashMap<>(rewritten);
        standalone.put("$defs", defs);
        return standalone;
    }

    @SuppressWarnings("unchecked")
    private static Object rewrite(Object value, Set<String> names) {
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> copy = new LinkedHashMap<>();
            ((Map<String, Object>) map).forEach((key, item) -> {
                if (key.equals("$ref") && item instanceof String ref && ref.startsWith(SCHEMAS)) {
                    String name = ref.substring(SCHEMAS.length());
                    names.add(name);
                    copy.put(key, "#/$defs/" + name);
                }
                else {
                    copy.put(key, rewrite(item, names));
                }
            });
            return copy;
        }
        if (value instanceof List<?> list) {
            return list.stream().map(item -> rewrite(item, names)).toList();
        }
        return value;
    }
}
