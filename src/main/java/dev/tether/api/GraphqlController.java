package dev.tether.api;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.tether.api.input.Bounds;
import dev.tether.api.input.Inputs;
import dev.tether.api.input.InvalidInputException;
import dev.tether.api.input.ServerConfigs;
import dev.tether.api.input.Slugs;
import dev.tether.calls.builtin.BuiltinHandler;
import dev.tether.calls.builtin.BuiltinHandlers;
import dev.tether.graphql.GraphqlExtractionException;
import dev.tether.graphql.GraphqlIntrospectionException;
import dev.tether.graphql.GraphqlSources;
import dev.tether.graphql.GraphqlSources.AddIntegration;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.Integration;

/** Executor's {@code /api/graphql} routes: add an endpoint as an integration, read and configure one. */
@RestController
@RequestMapping("/api/graphql")
final class GraphqlController implements BuiltinHandlers {

    /** Body of {@code POST /api/graphql/integrations}. */
    public record AddRequest(String endpoint, String slug, String name, @Nullable String introspectionJson, Map<String, String> headers,
            Map<String, String> queryParams, List<Object> authenticationTemplate) {
    }

    /** Body of {@code POST /api/graphql/integrations/{slug}/config}. */
    public record ConfigureRequest(List<Object> authenticationTemplate, String mode) {
    }

    private final GraphqlSources sources;
    private final BuiltinArguments arguments;

    GraphqlController(GraphqlSources sources, BuiltinArguments arguments) {
        this.sources = sources;
        this.arguments = arguments;
    }

    /** The built-ins {@code executor.graphql.getIntegration} and {@code addIntegration}: the routes' twins. */
    @Override
    public Map<String, BuiltinHandler> handlers() {
        return Map.of(
                "executor.graphql.getIntegration", (tool, args) -> arguments.run(tool, args, GetArguments.class, request -> {
                    String slug = Inputs.requireText(request.slug(), "slug");
                    Bounds.check("slug", slug);
                    // As on Executor: {integration: null} for a slug that is not a GraphQL integration.
                    Map<String, Object> none = new LinkedHashMap<>();
                    none.put("integration", null);
                    return sources.find(slug).map(found -> Map.<String, Object>of("integration", configView(found))).defaultIfEmpty(none);
                }),
                "executor.graphql.addIntegration", (tool, args) -> BuiltinArguments.naming(arguments.run(tool, args, AddRequest.class, this::add),
                        GraphqlIntrospectionException.class, "graphql_introspection_failed",
                        GraphqlExtractionException.class, "graphql_extraction_failed"));
    }

    /** Arguments of the built-in {@code getIntegration}. */
    public record GetArguments(String slug) {
    }

    @PostMapping("/integrations")
    Mono<Map<String, Object>> add(@RequestBody AddRequest request) {
        // The introspection answer is a document, bounded by tether.http.max-document-size where it is read.
        Bounds.check(new AddRequest(request.endpoint(), request.slug(), request.name(), null, request.headers(),
                request.queryParams(), request.authenticationTemplate()));
        return Mono.fromCallable(() -> {
                    String endpoint = Inputs.requireText(request.endpoint(), "endpoint");
                    ServerConfigs.checkHttpUrl(endpoint);
                    String slug = request.slug() == null || request.slug().isBlank() ? null : Slugs.check(request.slug());
                    return new AddIntegration(endpoint, slug, request.name(), request.introspectionJson(),
                            Inputs.headerMap(request.headers(), "headers"), Inputs.stringMap(request.queryParams(), "queryParams"),
                            request.authenticationTemplate());
                })
                .flatMap(sources::add);
    }

    /** As Executor 1.5.9: the integration's config, or {@code null}; secrets masked. */
    @GetMapping("/integrations/{slug}")
    Mono<Optional<Map<String, Object>>> get(@PathVariable String slug) {
        Bounds.check("slug", slug);
        return sources.find(slug).map(GraphqlController::configView).map(Optional::of).defaultIfEmpty(Optional.empty());
    }

    @GetMapping("/integrations/{slug}/config")
    Mono<Optional<Map<String, Object>>> config(@PathVariable String slug) {
        Bounds.check("slug", slug);
        return sources.find(slug).map(GraphqlController::configView).map(view -> {
            // As Executor 1.5.9's route: headers and query values unset are there as null.
            view.putIfAbsent("headers", null);
            view.putIfAbsent("queryParams", null);
            return view;
        }).map(Optional::of).defaultIfEmpty(Optional.empty());
    }

    @PostMapping("/integrations/{slug}/config")
    Mono<Map<String, Object>> configure(@PathVariable String slug, @RequestBody ConfigureRequest request) {
        Bounds.check("slug", slug);
        if (request == null || request.authenticationTemplate() == null) {
            throw InvalidInputException.decode("`authenticationTemplate` is required and must be a list");
        }
        if (request.mode() != null && !request.mode().equals("merge") && !request.mode().equals("replace")) {
            throw InvalidInputException.decode("`mode` must be \"merge\" or \"replace\"");
        }
        return sources.configure(slug, request.authenticationTemplate(), "replace".equals(request.mode())).defaultIfEmpty(List.of())
                .map(stored -> Map.<String, Object>of("authenticationTemplate", stored));
    }

    private static Map<String, Object> configView(Integration integration) {
        HttpSourceConfig config = (HttpSourceConfig) integration.config();
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("endpoint", config.settings().get("endpoint"));
        view.put("name", config.settings().get("name"));
        if (!config.headers().isEmpty()) {
            view.put("headers", masked(config.headers()));
        }
        if (!config.queryParams().isEmpty()) {
            view.put("queryParams", masked(config.queryParams()));
        }
        view.put("authenticationTemplate", config.settings().getOrDefault("authenticationTemplate", List.of()));
        return view;
    }

    private static Map<String, String> masked(Map<String, String> values) {
        Map<String, String> masked = new TreeMap<>();
        values.keySet().forEach(key -> masked.put(key, ServerConfigs.MASK));
        return masked;
    }
}
