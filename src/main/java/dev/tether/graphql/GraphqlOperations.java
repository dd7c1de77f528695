package dev.tether.graphql;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import graphql.introspection.IntrospectionResultToSchema;
import graphql.language.Document;
import graphql.parser.Parser;
import org.jspecify.annotations.Nullable;

import dev.tether.store.StoredTool;

/**
 * The root fields of a GraphQL schema as tools, as Executor 1.5.9 makes them: {@code query.<field>} and
 * {@code mutation.<field>}; arguments become the input schema (input objects and enums under {@code $defs}); the
 * operation is named after the field and selects at most 3 levels, 12 fields per type, never a type inside itself
 * (a composite field that would get no selection is left out, where Executor sends it bare and servers refuse it).
 * Mutations need approval, described as {@code mutation <field>}. graphql-java checks that the introspection answer
 * is a schema and that every operation made parses.
 */
final class GraphqlOperations {

    private static final int MAX_DEPTH = 2;
    private static final int MAX_FIELDS = 12;

    /** A tool and what its request needs: {@code {kind, fieldName, operationString, variableNames}}. */
    record Operation(StoredTool tool, Map<String, Object> binding) {
    }

    private final Map<String, Map<String, Object>> types = new LinkedHashMap<>();

    private GraphqlOperations(List<Map<String, Object>> typeList) {
        typeList.forEach(type -> types.put((String) type.get("name"), type));
    }

    /** The tools of an introspection answer's {@code __schema}; fails with {@link GraphqlExtractionException}. */
    @SuppressWarnings("unchecked")
    static List<Operation> of(Map<String, Object> introspection) {
        Map<String, Object> data = introspection.get("data") instanceof Map<?, ?> d ? (Map<String, Object>) d : introspection;
        if (!(data.get("__schema") instanceof Map<?, ?> schema) || !(schema.get("types") instanceof List<?> typeList)) {
            throw new GraphqlExtractionException("The introspection answer has no __schema with types");
        }
        try {
            Document document = new IntrospectionResultToSchema().createSchemaDefinition(data);
            if (document.getDefinitions().isEmpty()) {
                throw new GraphqlExtractionException("The introspection answer describes no types");
            }
        }
        catch (RuntimeException notASchema) {
            if (notASchema instanceof GraphqlExtractionException known) {
                throw known;
            }
            throw new GraphqlExtractionException("The introspection answer is not a GraphQL schema: " + notASchema.getMessage(), notASchema);
        }
        GraphqlOperations operations = new GraphqlOperations((List<Map<String, Object>>) typeList);
        List<Operation> tools = new ArrayList<>();
        for (String kind : List.of("query", "mutation")) {
            Object root = schema.get(kind + "Type");
            if (root instanceof Map<?, ?> rootRef && rootRef.get("name") instanceof String rootName
                    && operations.types.get(rootName) != null && operations.types.get(rootName).get("fields") instanceof List<?> fields) {
                for (Object field : fields) {
                    Map<String, Object> f = (Map<String, Object>) field;
                    if (!((String) Objects.requireNonNull(f.get("name"))).startsWith("__")) {
                        tools.add(operations.operation(kind, f));
                    }
                }
            }
        }
        if (tools.isEmpty()) {
            throw new GraphqlExtractionException("The schema has no query or mutation fields");
        }
        return tools;
    }

    @SuppressWarnings("unchecked")
    private Operation operation(String kind, Map<String, Object> field) {
        String name = (String) Objects.requireNonNull(field.get("name"));
        List<Map<String, Object>> args = field.get("args") instanceof List<?> a ? (List<Map<String, Object>>) a : List.of();
        List<String> varDefs = new ArrayList<>();
        List<String> argPasses = new ArrayList<>();
        Map<String, Object> properties = new LinkedHashMap<>();
        List<String> required = new ArrayList<>();
        Set<String> defs = new java.util.LinkedHashSet<>();
        for (Map<String, Object> arg : args) {
            String argName = (String) arg.get("name");
            Map<String, Object> type = (Map<String, Object>) Objects.requireNonNull(arg.get("type"));
            varDefs.add("$" + argName + ": " + format(type));
            argPasses.add(argName + ": $" + argName);
            Map<String, Object> schema = jsonSchema(type, defs);
            if (arg.get("description") instanceof String description) {
                schema.put("description", description);
            }
            properties.put(argName, schema);
            if ("NON_NULL".equals(type.get("kind"))) {
                required.add(argName);
            }
        }
        String selection = selection((Map<String, Object>) field.get("type"), 0, new HashSet<>());
        String opName = Character.toUpperCase(name.charAt(0)) + name.substring(1);
        String operation = kind + " " + opName + (varDefs.isEmpty() ? "" : "(" + String.join(", ", varDefs) + ")") + " { " + name
                + (argPasses.isEmpty() ? "" : "(" + String.join(", ", argPasses) + ")") + (selection.isEmpty() ? "" : " " + selection) + " }";
        try {
            Parser.parse(operation);
        }
        catch (RuntimeException unparsable) {
            throw new GraphqlExtractionException("The operation made for " + kind + "." + name + " does not parse: " + unparsable.getMessage(), unparsable);
        }
        Map<String, Object> inputSchema = new LinkedHashMap<>();
        inputSchema.put("type", "object");
        inputSchema.put("properties", properties);
        if (!required.isEmpty()) {
            inputSchema.put("required", required);
        }
        if (!defs.isEmpty()) {
            Map<String, Object> definitions = new LinkedHashMap<>();
            List<String> queue = new ArrayList<>(defs);
            while (!queue.isEmpty()) {
                String def = queue.remove(0);
                if (!definitions.containsKey(def)) {
                    Set<String> more = new java.util.LinkedHashSet<>();
                    definitions.put(def, definition(def, more));
                    queue.addAll(more);
                }
            }
            inputSchema.put("$defs", definitions);
        }
        String description = field.get("description") instanceof String d && !d.isEmpty() ? d
                : "GraphQL " + kind + ": " + name + " -> " + leafName((Map<String, Object>) field.get("type"));
        boolean mutation = kind.equals("mutation");
        StoredTool tool = new StoredTool(kind + "." + name, name, description, mutation, inputSchema, null, "graphql",
                mutation ? "mutation " + name : null);
        Map<String, Object> binding = new LinkedHashMap<>();
        binding.put("kind", kind);
        binding.put("fieldName", name);
        binding.put("operationString", operation);
        binding.put("variableNames", args.stream().map(a -> a.get("name")).toList());
        return new Operation(tool, binding);
    }

    @SuppressWarnings("unchecked")
    private String selection(@Nullable Map<String, Object> ref, int depth, Set<String> seen) {
        if (depth > MAX_DEPTH) {
            return "";
        }
        String leaf = leafName(ref);
        if (seen.contains(leaf)) {
            return "";
        }
        Map<String, Object> type = types.get(leaf);
        if (type == null || !(type.get("fields") instanceof List<?> fields)) {
            return "";
        }
        seen.add(leaf);
        List<String> sub = new ArrayList<>();
        for (Object raw : fields) {
            Map<String, Object> f = (Map<String, Object>) raw;
            String name = (String) Objects.requireNonNull(f.get("name"));
            if (name.startsWith("__")) {
                continue;
            }
            if (sub.size() == MAX_FIELDS) {
                break;
            }
            String nested = selection((Map<String, Object>) f.get("type"), depth + 1, seen);
            if (nested.isEmpty() && isComposite(leafName((Map<String, Object>) f.get("type")))) {
                // Too deep, or a type inside itself: Executor 1.5.9 sends such a field bare, which a server refuses
                // (a composite field needs a selection). It is left out.
                continue;
            }
            sub.add(nested.isEmpty() ? name : name + " " + nested);
        }
        seen.remove(leaf);
        return sub.isEmpty() ? "" : "{ " + String.join(" ", sub) + " }";
    }

    private boolean isComposite(String typeName) {
        Map<String, Object> type = types.get(typeName);
        return type != null && List.of("OBJECT", "INTERFACE", "UNION").contains(type.get("kind"));
    }

    @SuppressWarnings("unchecked")
    private static String leafName(@Nullable Map<String, Object> ref) {
        if (ref == null) {
            return "Unknown";
        }
        if (ref.get("name") instanceof String name) {
            return name;
        }
        return leafName((Map<String, Object>) ref.get("ofType"));
    }

    @SuppressWarnings("unchecked")
    private static String format(Map<String, Object> ref) {
        Map<String, Object> of = (Map<String, Object>) ref.get("ofType");
        return switch (String.valueOf(ref.get("kind"))) {
            case "NON_NULL" -> of == null ? "Unknown!" : format(of) + "!";
            case "LIST" -> of == null ? "[Unknown]" : "[" + format(of) + "]";
            default -> ref.get("name") instanceof String name ? name : "Unknown";
        };
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> jsonSchema(Map<String, Object> ref, Set<String> defs) {
        Map<String, Object> of = (Map<String, Object>) ref.get("ofType");
        Map<String, Object> schema = new LinkedHashMap<>();
        switch (String.valueOf(ref.get("kind"))) {
            case "NON_NULL" -> {
                return of == null ? schema : jsonSchema(of, defs);
            }
            case "LIST" -> {
                schema.put("type", "array");
                schema.put("items", of == null ? Map.of() : jsonSchema(of, defs));
            }
            case "SCALAR" -> {
                String name = ref.get("name") instanceof String n ? n : "String";
                switch (name) {
                    case "String", "ID" -> schema.put("type", "string");
                    case "Int" -> schema.put("type", "integer");
                    case "Float" -> schema.put("type", "number");
                    case "Boolean" -> schema.put("type", "boolean");
                    default -> {
                        schema.put("type", "string");
                        schema.put("description", "Custom scalar: " + name);
                    }
                }
            }
            case "ENUM", "INPUT_OBJECT" -> {
                if (ref.get("name") instanceof String name) {
                    defs.add(name);
                    schema.put("$ref", "#/$defs/" + name);
                }
                else {
                    schema.put("type", "ENUM".equals(ref.get("kind")) ? "string" : "object");
                }
            }
            case "OBJECT", "INTERFACE", "UNION" -> schema.put("type", "object");
            default -> {
            }
        }
        return schema;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> definition(String name, Set<String> more) {
        Map<String, Object> type = types.getOrDefault(name, Map.of());
        Map<String, Object> def = new LinkedHashMap<>();
        if ("ENUM".equals(type.get("kind")) && type.get("enumValues") instanceof List<?> values) {
            def.put("type", "string");
            def.put("enum", values.stream().map(v -> ((Map<String, Object>) v).get("name")).toList());
        }
        else if (type.get("inputFields") instanceof List<?> fields) {
            Map<String, Object> properties = new LinkedHashMap<>();
            List<String> required = new ArrayList<>();
            for (Object raw : fields) {
                Map<String, Object> field = (Map<String, Object>) raw;
                Map<String, Object> fieldType = (Map<String, Object>) Objects.requireNonNull(field.get("type"));
                Map<String, Object> schema = jsonSchema(fieldType, more);
                if (field.get("description") instanceof String description) {
                    schema.put("description", description);
                }
                properties.put((String) field.get("name"), schema);
                if ("NON_NULL".equals(fieldType.get("kind"))) {
                    required.add((String) field.get("name"));
                }
            }
            def.put("type", "object");
            def.put("properties", properties);
            if (!required.isEmpty()) {
                def.put("required", required);
            }
        }
        if (type.get("description") instanceof String description) {
            def.put("description", description);
        }
        return def;
    }
}
