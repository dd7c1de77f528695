package dev.tether.openapi;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import dev.tether.store.StoredTool;

/**
 * The operations of an OpenAPI document as tools, named as Executor 1.5.9 names them: {@code group.leaf}, the group
 * from the first tag (or the first path segment that is not a version, {@code api} or a parameter), the leaf from the
 * {@code operationId} (without a leading group segment) or from the method and path; {@code x-executor-toolPath}
 * names a tool outright. Names that collide get the path's version, then the method, then a hash. Writing methods
 * ({@code POST}, {@code PUT}, {@code PATCH}, {@code DELETE}) need approval, described as {@code METHOD /path}.
 */
final class OpenApiExtraction {

    static final List<String> METHODS = List.of("get", "put", "post", "delete", "patch", "head", "options", "trace");
    private static final Set<String> WRITING = Set.of("post", "put", "patch", "delete");
    private static final Set<String> LOCATIONS = Set.of("path", "query", "header", "cookie");

    /** One operation: its tool and what its request needs. */
    record Operation(String operationId, String method, String path, @Nullable String summary, List<String> tags,
            boolean deprecated, StoredTool tool, Map<String, Object> binding) {
    }

    /** A document's title, version, servers and operations, in Executor's order: by path, then by method. */
    record Extracted(@Nullable String title, @Nullable String version, List<Map<String, Object>> servers, List<Operation> operations) {

        /** The operations by tool path, as their tools are listed. */
        List<Operation> byToolPath() {
            return operations.stream().sorted(Comparator.comparing(operation -> operation.tool().name())).toList();
        }
    }

    private final Map<String, Object> doc;
    private final OpenApiReferences references;

    private OpenApiExtraction(Map<String, Object> doc) {
        this.doc = doc;
        this.references = new OpenApiReferences(doc);
    }

    /** Fails with {@link OpenApiExtractionException} when the document has no paths or an operation's inputs collide. */
    static Extracted extract(Map<String, Object> doc) {
        return new OpenApiExtraction(doc).run();
    }

    @SuppressWarnings("unchecked")
    private Extracted run() {
        if (!(doc.get("paths") instanceof Map<?, ?> paths) || paths.isEmpty()) {
            throw new OpenApiExtractionException("OpenAPI document has no paths defined");
        }
        List<Map<String, Object>> docServers = OpenApiServers.of(doc.get("servers"));
        List<Draft> drafts = new ArrayList<>();
        List<String> sortedPaths = new ArrayList<>((Set<String>) (Set<?>) paths.keySet());
        sortedPaths.sort(LocaleCompareOrder.INSTANCE);
        for (String path : sortedPaths) {
            if (!(references.resolve(paths.get(path)) instanceof Map<?, ?> item)) {
                continue;
            }
            for (String method : METHODS) {
                if (item.get(method) instanceof Map<?, ?> operation) {
                    drafts.add(draft(path, (Map<String, Object>) item, method, (Map<String, Object>) operation, docServers));
                }
            }
        }
        name(drafts);
        List<Operation> operations = drafts.stream().map(Draft::operation).toList();
        Map<String, Object> info = doc.get("info") instanceof Map<?, ?> i ? (Map<String, Object>) i : Map.of();
        return new Extracted(text(info.get("title")), text(info.get("version")), docServers, operations);
    }

    // ---- one operation ------------------------------------------------------------------------------------------

    private final class Draft {
        final String path;
        final String method;
        final String operationId;
        final Map<String, Object> operation;
        final List<String> tags;
        final Map<String, Object> inputSchema;
        final @Nullable Map<String, Object> outputSchema;
        final Map<String, Object> binding;
        String group = "";
        String leaf = "";
        @Nullable String version;
        String toolPath = "";

        Draft(String path, String method, String operationId, Map<String, Object> operation, List<String> tags,
                Map<String, Object> inputSchema, @Nullable Map<String, Object> outputSchema, Map<String, Object> binding) {
            this.path = path;
            this.method = method;
            this.operationId = operationId;
            this.operation = operation;
            this.tags = tags;
            this.inputSchema = inputSchema;
            this.outputSchema = outputSchema;
            this.binding = binding;
        }

        Operation operation() {
            String summary = text(operation.get("summary"));
            String description = text(operation.get("description"));
            String shown = description != null ? description : summary != null ? summary
                    : method.toUpperCase(Locale.ROOT) + " " + binding.get("pathTemplate");
            boolean writes = WRITING.contains(method);
            StoredTool tool = new StoredTool(toolPath, operationId, shown, writes, inputSchema, outputSchema, "openapi",
                    writes ? method.toUpperCase(Locale.ROOT) + " " + binding.get("pathTemplate") : null);
            return new Operation(operationId, method, path, summary, tags, Boolean.TRUE.equals(operation.get("deprecated")), tool, binding);
        }
    }

    @SuppressWarnings("unchecked")
    private Draft draft(String path, Map<String, Object> item, String method, Map<String, Object> operation,
            List<Map<String, Object>> docServers) {
        String operationId = text(operation.get("operationId"));
        if (operationId == null) {
            String derived = (method + "_" + path.replaceAll("[^a-zA-Z0-9]+", "_")).replaceAll("^_+|_+$", "");
            operationId = derived.isEmpty() ? method + "_operation" : derived;
        }
        String where = method.toUpperCase(Locale.ROOT) + " " + path;

        Map<String, Map<String, Object>> merged = new LinkedHashMap<>();
        for (Object list : new Object[] { item.get("parameters"), operation.get("parameters") }) {
            if (list instanceof List<?> parameters) {
                for (Object raw : parameters) {
                    if (references.resolve(raw) instanceof Map<?, ?> parameter && parameter.get("name") instanceof String name
                            && parameter.get("in") instanceof String in && LOCATIONS.contains(in)) {
                        merged.put(in + ":" + name, (Map<String, Object>) parameter);
                    }
                }
            }
        }
        Map<String, Object> properties = new LinkedHashMap<>();
        List<String> required = new ArrayList<>();
        List<Map<String, Object>> parameters = new ArrayList<>();
        Map<String, String> seen = new HashMap<>();
        for (Map<String, Object> parameter : merged.values()) {
            String name = (String) parameter.get("name");
            String in = (String) parameter.get("in");
            String before = seen.put(name, in);
            if (before != null) {
                throw new OpenApiExtractionException("Operation " + where + " has two inputs named `" + name + "` (in " + before
                        + " and in " + in + "): a tool's arguments are one object, so their names must differ");
            }
            Object schema = parameter.get("schema") instanceof Map<?, ?> s ? s : Map.of("type", "string");
            properties.put(name, schema);
            boolean mandatory = Objects.requireNonNull(in).equals("path") || Boolean.TRUE.equals(parameter.get("required"));
            if (mandatory) {
                required.add(name);
            }
            Map<String, Object> binding = new LinkedHashMap<>();
            binding.put("name", name);
            binding.put("in", in);
            binding.put("required", mandatory);
            copy(parameter, binding, "style", "explode", "allowReserved");
            parameters.add(binding);
        }
        List<Map<String, Object>> servers = OpenApiServers.of(operation.get("servers"));
        if (servers.isEmpty()) {
            servers = OpenApiServers.of(item.get("servers"));
        }
        if (servers.isEmpty()) {
            servers = docServers;
        }
        Map<String, Object> serverInput = OpenApiServers.input(servers);
        if (serverInput != null && !properties.containsKey("server")) {
            properties.put("server", serverInput);
        }
        Map<String, Object> body = null;
        if (references.resolve(operation.get("requestBody")) instanceof Map<?, ?> requestBody
                && requestBody.get("content") instanceof Map<?, ?> content && !content.isEmpty()) {
            if (seen.containsKey("body")) {
                throw new OpenApiExtractionException("Operation " + where + " has a parameter named `body` beside its request body");
            }
            List<String> types = new ArrayList<>((Set<String>) (Set<?>) content.keySet());
            Object first = references.resolve(content.get(types.get(0)));
            Object schema = first instanceof Map<?, ?> media && media.get("schema") instanceof Map<?, ?> s ? s : Map.of("type", "object");
            properties.put("body", schema);
            boolean mandatory = Boolean.TRUE.equals(requestBody.get("required"));
            if (mandatory) {
                required.add("body");
            }
            if (types.size() > 1) {
                if (seen.containsKey("contentType")) {
                    throw new OpenApiExtractionException("Operation " + where + " has a parameter named `contentType` beside a request body of several media types");
                }
                properties.put("contentType", Map.of("type", "string", "enum", types, "default", types.get(0),
                        "description", "Content-Type for the request body. Declared media types for this operation, in spec order."));
            }
            body = new LinkedHashMap<>();
            body.put("contentType", types.get(0));
            body.put("contentTypes", types);
            body.put("required", mandatory);
        }
        Map<String, Object> inputSchema = new LinkedHashMap<>();
        inputSchema.put("type", "object");
        inputSchema.put("properties", properties);
        if (!required.isEmpty()) {
            inputSchema.put("required", required);
        }
        inputSchema.put("additionalProperties", false);

        String givenTemplate = text(operation.get("x-executor-pathTemplate"));
        String pathTemplate = givenTemplate != null ? givenTemplate.strip() : path;
        Map<String, Object> binding = new LinkedHashMap<>();
        binding.put("method", method);
        binding.put("pathTemplate", pathTemplate);
        binding.put("servers", servers);
        binding.put("parameters", parameters);
        if (body != null) {
            binding.put("requestBody", body);
        }
        List<String> tags = operation.get("tags") instanceof List<?> list
                ? list.stream().filter(t -> t instanceof String s && !s.isBlank()).map(String.class::cast).toList() : List.of();
        Draft draft = new Draft(path, method, operationId, operation, tags, references.selfContained(inputSchema),
                outputSchema(operation), binding);
        String explicit = text(operation.get("x-executor-toolPath"));
        draft.version = ToolNames.versionSegment(pathTemplate);
        if (explicit != null && !explicit.isBlank()) {
            String[] parts = explicit.strip().split("\\.");
            List<String> segments = java.util.Arrays.stream(parts).filter(p -> !p.isEmpty()).toList();
            draft.group = segments.isEmpty() ? "root" : segments.get(0);
            draft.leaf = segments.size() > 1 ? String.join(".", segments.subList(1, segments.size())) : draft.group;
            draft.toolPath = explicit.strip();
        }
        else {
            draft.group = tags.isEmpty() ? ToolNames.pathGroup(pathTemplate) : ToolNames.camel(tags.get(0));
            draft.leaf = ToolNames.leaf(operationId, method, pathTemplate, draft.group);
            draft.toolPath = draft.group + "." + draft.leaf;
        }
        return draft;
    }

    @SuppressWarnings("unchecked")
    private @Nullable Map<String, Object> outputSchema(Map<String, Object> operation) {
        if (!(operation.get("responses") instanceof Map<?, ?> responses)) {
            return null;
        }
        List<String> codes = new ArrayList<>();
        ((Set<String>) (Set<?>) responses.keySet()).stream().filter(c -> c.matches("2\\d\\d")).sorted().forEach(codes::add);
        if (responses.containsKey("default")) {
            codes.add("default");
        }
        for (String code : codes) {
            if (references.resolve(responses.get(code)) instanceof Map<?, ?> response && response.get("content") instanceof Map<?, ?> content) {
                Object media = preferred((Map<String, Object>) content);
                if (references.resolve(media) instanceof Map<?, ?> m && m.get("schema") instanceof Map<?, ?> schema) {
                    return references.selfContained((Map<String, Object>) schema);
                }
            }
        }
        return null;
    }

    private static @Nullable Object preferred(Map<String, Object> content) {
        for (String type : content.keySet()) {
            if (type.equals("application/json")) {
                return content.get(type);
            }
        }
        for (String type : content.keySet()) {
            if (type.toLowerCase(Locale.ROOT).contains("json")) {
                return content.get(type);
            }
        }
        return content.values().stream().findFirst().orElse(null);
    }

    // ---- naming, as Executor's definitions.ts ---------------------------------------------------------------------

    private static void name(List<Draft> drafts) {
        rename(drafts, d -> d.version != null ? d.group + "." + d.version + "." + d.leaf : d.toolPath);
        rename(drafts, d -> prefix(d) + "." + d.leaf + ToolNames.pascal(d.method));
        rename(drafts, d -> prefix(d) + "." + d.leaf + ToolNames.pascal(d.method) + hash(d).substring(0, 8));
    }

    private static String prefix(Draft d) {
        return d.version != null ? d.group + "." + d.version : d.group;
    }

    private static void rename(List<Draft> drafts, java.util.function.Function<Draft, String> rename) {
        Map<String, List<Draft>> byPath = new LinkedHashMap<>();
        drafts.forEach(d -> byPath.computeIfAbsent(d.toolPath, p -> new ArrayList<>()).add(d));
        byPath.values().stream().filter(bucket -> bucket.size() > 1).flatMap(List::stream).forEach(d -> d.toolPath = rename.apply(d));
    }

    /** Executor's stableHash: a 32-bit string hash of {@code {"method","operationId","path"}} in base 36. */
    private static String hash(Draft d) {
        String json = "{\"method\":\"" + d.method + "\",\"operationId\":\"" + d.operationId + "\",\"path\":\"" + d.path + "\"}";
        String base36 = Long.toString(Math.abs((long) json.hashCode()), 36);
        return "0".repeat(Math.max(0, 8 - base36.length())) + base36;
    }

    private static void copy(Map<String, Object> from, Map<String, Object> to, String... keys) {
        for (String key : keys) {
            if (from.get(key) != null) {
                to.put(key, from.get(key));
            }
        }
    }

    private static @Nullable String text(@Nullable Object value) {
        return value instanceof String text ? text : null;
    }
}
