package dev.tether.graphql;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.api.input.Bounds;
import dev.tether.api.input.Inputs;
import dev.tether.calls.builtin.BuiltinArguments;
import dev.tether.calls.builtin.BuiltinHandler;
import dev.tether.calls.builtin.BuiltinHandlers;
import dev.tether.graphql.GraphqlRequests.AddRequest;

/**
 * The built-ins {@code executor.graphql.getIntegration} and {@code addIntegration}: twins of Executor's GraphQL routes,
 * checked ({@link GraphqlRequests}) and answered ({@link GraphqlViews}) as the routes are, with Executor's failure codes.
 */
@Component
final class GraphqlBuiltins implements BuiltinHandlers {

    /** Arguments of the built-in {@code getIntegration}. */
    public record GetArguments(String slug) {
    }

    private final GraphqlSources sources;
    private final BuiltinArguments arguments;

    GraphqlBuiltins(GraphqlSources sources, BuiltinArguments arguments) {
        this.sources = sources;
        this.arguments = arguments;
    }

    @Override
    public Map<String, BuiltinHandler> handlers() {
        return Map.of(
                "executor.graphql.getIntegration", (tool, args) -> arguments.run(tool, args, GetArguments.class, request -> {
                    String slug = Inputs.requireText(request.slug(), "slug");
                    Bounds.check("slug", slug);
                    // As on Executor: {integration: null} for a slug that is not a GraphQL integration.
                    Map<String, Object> none = new LinkedHashMap<>();
                    none.put("integration", null);
                    return sources.find(slug).map(found -> Map.<String, Object>of("integration", GraphqlViews.config(found)))
                            .defaultIfEmpty(none);
                }),
                "executor.graphql.addIntegration", (tool, args) -> BuiltinArguments.naming(
                        arguments.run(tool, args, AddRequest.class, request -> Mono.fromCallable(request::checked).flatMap(sources::add)),
                        GraphqlIntrospectionException.class, "graphql_introspection_failed",
                        GraphqlExtractionException.class, "graphql_extraction_failed"));
    }
}
