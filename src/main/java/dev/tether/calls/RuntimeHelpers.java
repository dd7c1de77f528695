package dev.tether.calls;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.calls.builtin.BuiltinHandler;
import dev.tether.calls.builtin.BuiltinHandlers;
import dev.tether.calls.builtin.BuiltinTool;
import dev.tether.calls.builtin.BuiltinTools;
import dev.tether.calls.builtin.ToolDescriptions;
import dev.tether.catalog.CatalogService;
import dev.tether.identity.Principals;
import dev.tether.store.CatalogStore;
import dev.tether.store.IntegrationStore;

/**
 * The code runtime's own helpers, which Executor's CLI runs for {@code tools search|describe|sources}: {@code search},
 * {@code describe.tool} and {@code executor.sources.list}, over the listed built-ins and every connection's tools.
 * Their answers reach code as they are, not in a result envelope.
 */
@Component
final class RuntimeHelpers implements BuiltinHandlers {

    private static final int SUGGESTIONS = 5;

    private final BuiltinTools builtins;
    private final IntegrationStore integrations;
    private final CatalogService catalogs;
    private final CatalogStore stored;

    RuntimeHelpers(BuiltinTools builtins, IntegrationStore integrations, CatalogService catalogs, CatalogStore stored) {
        this.builtins = builtins;
        this.integrations = integrations;
        this.catalogs = catalogs;
        this.stored = stored;
    }

    @Override
    public Map<String, BuiltinHandler> handlers() {
        return Map.of(
                "search", (tool, args) -> search(RuntimeArguments.search(args)),
                "executor.sources.list", (tool, args) -> sourcesList(RuntimeArguments.sources(args)),
                "describe.tool", (tool, args) -> describe(RuntimeArguments.describe(args)));
    }

    private Mono<Object> search(RuntimeArguments.Search args) {
        if (ToolSearch.normalize(args.query()).isEmpty()) {
            return Mono.just(ToolSearch.page(List.of(), 0, args.limit()));
        }
        return candidates().map(all -> ToolSearch.page(ToolSearch.rank(all, args.query(), args.namespace()), args.offset(), args.limit()));
    }

    /** Every tool code can call: the listed built-ins and every connection's tools, as search sees them. */
    private Mono<List<ToolSearch.Candidate>> candidates() {
        Flux<ToolSearch.Candidate> listed = Flux.fromIterable(builtins.listed())
                .map(tool -> new ToolSearch.Candidate(tool.path(), BuiltinTool.INTEGRATION, tool.name(), tool.description()));
        Flux<ToolSearch.Candidate> mcp = catalogs.tools(Optional.empty(), Optional.empty(), Optional.empty())
                .flatMapIterable(connection -> connection.tools().stream().map(tool -> new ToolSearch.Candidate(
                        connection.key().toolAddress(tool.name()).substring("tools.".length()), connection.key().integration(),
                        tool.name(), tool.description())).toList());
        return Flux.concat(listed, mcp).collectList();
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
            sources.add(new Source(BuiltinTool.INTEGRATION, "Executor", "built-in", false, builtins.listed().size()));
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
        Map<String, Object> runtime = ToolDescriptions.RUNTIME.get(path);
        if (runtime != null) {
            return Mono.just(runtime);
        }
        Optional<BuiltinTool> builtin = builtins.find(path).filter(tool -> !tool.runtime());
        if (builtin.isPresent()) {
            return Mono.just(ToolDescriptions.listed(builtin.get()));
        }
        return ToolAddress.of("tools." + path)
                .map(address -> Principals.current().map(address::connection).flatMap(stored::catalog)
                        .flatMap(catalog -> Mono.justOrEmpty(catalog.tools().stream().filter(t -> t.name().equals(address.tool())).findFirst())))
                .orElse(Mono.empty())
                .map(tool -> (Object) ToolDescriptions.mcp(path, tool))
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
}
