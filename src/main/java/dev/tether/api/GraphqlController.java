package dev.tether.api;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.tether.api.input.Bounds;
import dev.tether.api.input.InvalidInputException;
import dev.tether.graphql.GraphqlRequests.AddRequest;
import dev.tether.graphql.GraphqlSources;
import dev.tether.graphql.GraphqlViews;

/**
 * Executor's {@code /api/graphql} routes: add an endpoint as an integration, read and configure one. The built-ins that
 * are twins of these routes are {@code graphql.GraphqlBuiltins}; both check the bodies ({@code graphql.GraphqlRequests})
 * and answer ({@code graphql.GraphqlViews}) alike.
 */
@RestController
@RequestMapping("/api/graphql")
final class GraphqlController {

    /** Body of {@code POST /api/graphql/integrations/{slug}/config}. */
    public record ConfigureRequest(List<Object> authenticationTemplate, String mode) {
    }

    private final GraphqlSources sources;

    GraphqlController(GraphqlSources sources) {
        this.sources = sources;
    }

    @PostMapping("/integrations")
    Mono<Map<String, Object>> add(@RequestBody AddRequest request) {
        return Mono.fromCallable(request::checked).flatMap(sources::add);
    }

    /** As Executor 1.5.9: the integration's config, or {@code null}; secrets masked. */
    @GetMapping("/integrations/{slug}")
    Mono<Optional<Map<String, Object>>> get(@PathVariable String slug) {
        Bounds.check("slug", slug);
        return sources.find(slug).map(GraphqlViews::config).map(Optional::of).defaultIfEmpty(Optional.empty());
    }

    @GetMapping("/integrations/{slug}/config")
    Mono<Optional<Map<String, Object>>> config(@PathVariable String slug) {
        Bounds.check("slug", slug);
        return sources.find(slug).map(GraphqlViews::config).map(view -> {
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
}
