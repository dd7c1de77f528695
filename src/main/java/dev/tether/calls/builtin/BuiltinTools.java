package dev.tether.calls.builtin;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.calls.ToolAddress;
import dev.tether.catalog.CatalogService;
import dev.tether.session.SessionPool;
import dev.tether.store.CatalogStore;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionStore;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationStore;
import dev.tether.store.Owner;
import dev.tether.store.StoredTool;
import dev.tether.views.Views.ConnectionView;
import dev.tether.views.Views.ToolView;

/**
 * The tools of Executor's built-in {@code executor} integration that Tether can answer from its own state, with
 * Executor 1.5.9's names, schemas and answers: the code runtime's {@code search}, {@code describe.tool} and
 * {@code executor.sources.list}, which Executor's CLI runs for {@code tools search|describe|sources}, and the listed
 * {@code executor.coreTools.*} tools over integrations, connections and providers. The listed ones' names,
 * descriptions and schemas are in {@code executor-tools.json} beside this class.
 */
@Component
public final class BuiltinTools {

    private static final String TOOL_ERROR = "{ code: string; message: string; status?: number; details?: unknown; retryable?: boolean }";
    private static final String TOOL_HTTP_META = "{ status: number; headers: { [k: string]: string; } }";
    private static final int SUGGESTIONS = 5;

    /** What an MCP tool's answer is, with its structured content's own type where the server declared one. */
    private static final String CALL_TOOL_RESULT = "{ content: ({ type: \"text\"; text: string; } | { type: \"image\"; data: string; mimeType: string; }"
            + " | { type: \"audio\"; data: string; mimeType: string; } | { type: \"resource_link\"; uri: string; name: string; }"
            + " | { type: \"resource\"; resource: { uri: string; mimeType?: string; text?: string; blob?: string; }; })[];"
            + " structuredContent?: %s; isError?: boolean; [k: string]: unknown; }";

    /** How the code runtime's helpers describe themselves to {@code describe.tool}, as Executor 1.5.9 words it. */
    private static final Map<String, Map<String, Object>> RUNTIME_DESCRIPTIONS = Map.of(
            "search", description("search", "Search available Executor tools.",
                    "{ query: string; namespace?: string; limit?: number; offset?: number; }",
                    "{ items: ToolDiscoveryResult[]; total: number; hasMore: boolean; nextOffset: number | null; }",
                    Map.of("ToolDiscoveryResult", "{ path: string; name: string; description?: string; integration: string; score: number; }")),
            "executor.sources.list", description("executor.sources.list", "List configured Executor integrations.",
                    "{ query?: string; limit?: number; offset?: number; }",
                    "{ items: ExecutorSourceListItem[]; total: number; hasMore: boolean; nextOffset: number | null; }",
                    Map.of("ExecutorSourceListItem", "{ id: string; name: string; kind: string; canRemove?: boolean; canRefresh?: boolean; toolCount: number; }")),
            "describe.tool", description("describe.tool", "Describe a tool's compact TypeScript input and output shapes.",
                    "{ path: string; }", "DescribedTool",
                    Map.of("DescribedTool", "{ path: string; name: string; description?: string; inputTypeScript?: string; outputTypeScript?: string;"
                            + " typeScriptDefinitions?: { [k: string]: string; }; error?: { code: \"tool_not_found\"; message: string; suggestions?: string[]; }; }")));

    private final IntegrationStore integrations;
    private final ConnectionStore connections;
    private final CatalogService catalogs;
    private final CatalogStore stored;
    private final SessionPool sessions;
    private final Map<String, BuiltinTool> tools = new LinkedHashMap<>();
    private final Map<String, BiFunction<BuiltinTool, Object, Mono<Object>>> handlers = new LinkedHashMap<>();

    public BuiltinTools(IntegrationStore integrations, ConnectionStore connections, CatalogService catalogs, CatalogStore stored,
            SessionPool sessions, JsonMapper json) {
        this.integrations = integrations;
        this.connections = connections;
        this.catalogs = catalogs;
        this.stored = stored;
        this.sessions = sessions;
        for (BuiltinTool tool : listedTools(json)) {
            tools.put(tool.path(), tool);
        }
        handlers.put("executor.coreTools.integrations.list", (tool, args) -> integrationsList());
        handlers.put("executor.coreTools.connections.list", (tool, args) -> connectionsList(Arguments.of(tool, args)));
        handlers.put("executor.coreTools.connections.remove", (tool, args) -> connectionsRemove(Arguments.of(tool, args)));
        handlers.put("executor.coreTools.connections.refresh", (tool, args) -> connectionsRefresh(Arguments.of(tool, args)));
        handlers.put("executor.coreTools.providers.list", (tool, args) -> Mono.just(Map.of("providers", List.of("executor"))));
        runtime("search", (tool, args) -> search(RuntimeArguments.search(args)));
        runtime("executor.sources.list", (tool, args) -> sourcesList(RuntimeArguments.sources(args)));
        runtime("describe.tool", (tool, args) -> describe(RuntimeArguments.describe(args)));
        if (!handlers.keySet().containsAll(tools.keySet())) {
            throw new IllegalStateException("a built-in tool without a handler: " + tools.keySet());
        }
    }

    /** The built-ins {@code GET /api/tools} lists, in Executor's order. */
    public List<BuiltinTool> listed() {
        return tools.values().stream().filter(tool -> !tool.runtime()).toList();
    }

    /** The built-in at {@code path} (no {@code tools.} prefix), listed or a runtime helper. */
    public Optional<BuiltinTool> find(String path) {
        return Optional.ofNullable(tools.get(path));
    }

    /**
     * Runs a built-in: a listed one answers its {@code data}, a runtime helper its value. Fails with
     * {@link InvalidToolArgumentsException} for arguments it cannot take.
     */
    public Mono<Object> run(BuiltinTool tool, Object arguments) {
        return Mono.defer(() -> handlers.get(tool.path()).apply(tool, arguments));
    }

    private void runtime(String path, BiFunction<BuiltinTool, Object, Mono<Object>> handler) {
        Map<String, Object> described = RUNTIME_DESCRIPTIONS.get(path);
        tools.put(path, new BuiltinTool(path, path, "executor", (String) described.get("description"), null, null, null, true));
        handlers.put(path, handler);
    }

    private Mono<Object> integrationsList() {
        return integrations.all()
                .map(integration -> integrationItem(integration.slug(), integration.description(), "mcp", true, true))
                .startWith(integrationItem(BuiltinTool.INTEGRATION, "Executor", "built-in", false, false))
                .collectList()
                .map(items -> Map.of("integrations", items));
    }

    private static Map<String, Object> integrationItem(String slug, String description, String kind, boolean canRemove, boolean canRefresh) {
        Map<String, Object> item = new LinkedHashMap<>();
        item.put("slug", slug);
        item.put("description", description == null ? "" : description);
        item.put("kind", kind);
        item.put("canRemove", canRemove);
        item.put("canRefresh", canRefresh);
        return item;
    }

    private Mono<Object> connectionsList(Arguments args) {
        Optional<String> integration = args.optionalText("integration");
        Optional<Owner> owner = args.optionalOwner("owner");
        return connections.all(integration, owner).map(ConnectionView::withoutHealth).collectList()
                .map(items -> Map.of("connections", items));
    }

    private Mono<Object> connectionsRemove(Arguments args) {
        ConnectionKey key = args.connectionKey();
        return connections.delete(key)
                .flatMap(removed -> (removed ? sessions.retire(key) : Mono.<Void>empty()).thenReturn(Map.of("removed", removed)));
    }

    private Mono<Object> connectionsRefresh(Arguments args) {
        return catalogs.refresh(args.connectionKey()).map(refreshed -> Map.of("tools", refreshed.tools().stream()
                .map(tool -> ToolView.of(refreshed.key(), tool)).toList()));
    }

    private Mono<Object> search(RuntimeArguments.Search args) {
        if (ToolSearch.normalize(args.query()).isEmpty()) {
            return Mono.just(ToolSearch.page(List.of(), 0, args.limit()));
        }
        return candidates().map(all -> ToolSearch.page(ToolSearch.rank(all, args.query(), args.namespace()), args.offset(), args.limit()));
    }

    /** Every tool code can call: the listed built-ins and every connection's tools, as search sees them. */
    private Mono<List<ToolSearch.Candidate>> candidates() {
        Flux<ToolSearch.Candidate> builtins = Flux.fromIterable(listed())
                .map(tool -> new ToolSearch.Candidate(tool.path(), BuiltinTool.INTEGRATION, tool.name(), tool.description()));
        Flux<ToolSearch.Candidate> mcp = catalogs.tools(Optional.empty(), Optional.empty(), Optional.empty())
                .flatMapIterable(connection -> connection.tools().stream().map(tool -> new ToolSearch.Candidate(
                        connection.key().toolAddress(tool.name()).substring("tools.".length()), connection.key().integration(),
                        tool.name(), tool.description())).toList());
        return Flux.concat(builtins, mcp).collectList();
    }

    private Mono<Object> sourcesList(RuntimeArguments.Sources args) {
        List<String> words = ToolSearch.tokens(args.query().orElse(""));
        Mono<Map<String, Integer>> counts = catalogs.tools(Optional.empty(), Optional.empty(), Optional.empty())
                .reduce(new LinkedHashMap<String, Integer>(), (total, connection) -> {
                    total.merge(connection.key().integration(), connection.tools().size(), Integer::sum);
                    return total;
                });
        return Mono.zip(integrations.all().collectList(), counts).map(both -> {
            List<Source> sources = new ArrayList<>();
            sources.add(new Source(BuiltinTool.INTEGRATION, "Executor", "built-in", false, listed().size()));
            both.getT1().forEach(integration -> sources.add(new Source(integration.slug(), integration.description(), "mcp", true,
                    both.getT2().getOrDefault(integration.slug(), 0))));
            List<Map<String, Object>> matching = sources.stream()
                    .filter(source -> words.stream().allMatch(source.haystack()::contains))
                    .sorted(Comparator.comparing(Source::slug))
                    .map(Source::item)
                    .toList();
            return ToolSearch.page(matching, args.offset(), args.limit());
        });
    }

    /** An integration as {@code executor.sources.list} shows it. */
    private record Source(String slug, String description, String kind, boolean removable, int toolCount) {

        String haystack() {
            return ToolSearch.normalize(slug + " " + (description == null ? "" : description) + " " + kind);
        }

        Map<String, Object> item() {
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("id", slug);
            item.put("name", slug);
            item.put("kind", kind);
            item.put("canRemove", removable);
            item.put("canRefresh", removable);
            item.put("toolCount", toolCount);
            return item;
        }
    }

    private Mono<Object> describe(String path) {
        Map<String, Object> runtime = RUNTIME_DESCRIPTIONS.get(path);
        if (runtime != null) {
            return Mono.just(runtime);
        }
        Optional<BuiltinTool> builtin = find(path).filter(tool -> !tool.runtime());
        if (builtin.isPresent()) {
            BuiltinTool tool = builtin.get();
            return Mono.just(described(path, tool.name(), tool.description(), TypeScriptShapes.of(tool.inputSchema()),
                    TypeScriptShapes.of(tool.outputSchema())));
        }
        return ToolAddress.of("tools." + path)
                .map(address -> stored.catalog(address.connection())
                        .flatMap(catalog -> Mono.justOrEmpty(catalog.tools().stream().filter(t -> t.name().equals(address.tool())).findFirst())))
                .orElse(Mono.empty())
                .map(tool -> (Object) described(path, tool.name(), tool.description(), TypeScriptShapes.of(tool.inputSchema()),
                        CALL_TOOL_RESULT.formatted(tool.outputSchema() == null ? "{ [k: string]: unknown; }" : TypeScriptShapes.of(tool.outputSchema()))))
                .switchIfEmpty(Mono.defer(() -> notDescribed(path)));
    }

    /** Executor's answer for a path that names no tool: suggestions from a search for its last segment. */
    private Mono<Object> notDescribed(String path) {
        String leaf = path.substring(path.lastIndexOf('.') + 1);
        String namespace = path.contains(".") ? path.substring(0, path.indexOf('.')) : path;
        return candidates().map(all -> {
            List<Map<String, Object>> scoped = ToolSearch.rank(all, leaf, Optional.of(namespace));
            List<Map<String, Object>> matches = scoped.isEmpty() ? ToolSearch.rank(all, leaf, Optional.empty()) : scoped;
            List<Object> suggestions = matches.stream().limit(SUGGESTIONS).map(match -> match.get("path")).toList();
            Map<String, Object> error = new LinkedHashMap<>();
            error.put("code", "tool_not_found");
            error.put("message", "Tool not found: " + path);
            if (!suggestions.isEmpty()) {
                error.put("suggestions", suggestions);
            }
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("path", path);
            answer.put("name", path);
            answer.put("error", error);
            return answer;
        });
    }

    private static Map<String, Object> described(String path, String name, String description, String input, String output) {
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("path", path);
        described.put("name", name);
        if (description != null) {
            described.put("description", description);
        }
        if (input != null) {
            described.put("inputTypeScript", input);
        }
        described.put("outputTypeScript", "{ ok: true; data: " + (output == null ? "unknown" : output)
                + "; http?: ToolHttpMeta } | { ok: false; error: ToolError }");
        described.put("typeScriptDefinitions", Map.of("ToolError", TOOL_ERROR, "ToolHttpMeta", TOOL_HTTP_META));
        return described;
    }

    private static Map<String, Object> description(String path, String description, String input, String output,
            Map<String, String> definitions) {
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("path", path);
        described.put("name", path);
        described.put("description", description);
        described.put("inputTypeScript", input);
        described.put("outputTypeScript", output);
        described.put("typeScriptDefinitions", definitions);
        return described;
    }

    private static List<BuiltinTool> listedTools(JsonMapper json) {
        try (InputStream in = BuiltinTools.class.getResourceAsStream("executor-tools.json")) {
            if (in == null) {
                throw new IllegalStateException("executor-tools.json is missing beside " + BuiltinTools.class.getName());
            }
            List<Map<String, Object>> rows = json.readValue(in, new TypeReference<>() { });
            return rows.stream().map(row -> new BuiltinTool((String) row.get("path"), (String) row.get("name"),
                    (String) row.get("pluginId"), (String) row.get("description"), (Boolean) row.get("requiresApproval"),
                    schema(row.get("inputSchema")), schema(row.get("outputSchema")), false)).toList();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> schema(Object schema) {
        return (Map<String, Object>) schema;
    }
}
