package dev.tether.api;

import java.util.Map;

import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.calls.builtin.BuiltinTool;
import dev.tether.views.Views.IntegrationView;
import dev.tether.catalog.CatalogService;
import dev.tether.session.SessionPool;
import dev.tether.store.IntegrationNotFoundException;
import dev.tether.store.IntegrationStore;
import dev.tether.api.input.Bounds;
import dev.tether.api.input.InvalidInputException;

@RestController
@RequestMapping("/api/integrations")
final class IntegrationsController {

    /** Body of {@code PATCH /api/integrations/{slug}}: what to change; absent fields stay. */
    public record UpdateRequest(String name, String description) {
    }

    private final IntegrationStore integrations;
    private final SessionPool pool;
    private final CatalogService catalogs;

    IntegrationsController(IntegrationStore integrations, SessionPool pool, CatalogService catalogs) {
        this.integrations = integrations;
        this.pool = pool;
        this.catalogs = catalogs;
    }

    @GetMapping
    Flux<IntegrationView> list() {
        return integrations.all().map(IntegrationView::of).startWith(IntegrationView.BUILT_IN);
    }

    @GetMapping("/{slug}")
    Mono<IntegrationView> get(@PathVariable String slug) {
        Bounds.check("slug", slug);
        if (slug.equals(BuiltinTool.INTEGRATION)) {
            return Mono.just(IntegrationView.BUILT_IN);
        }
        return integrations.find(slug)
                .switchIfEmpty(Mono.error(() -> new IntegrationNotFoundException(slug)))
                .map(IntegrationView::of);
    }

    @PatchMapping("/{slug}")
    Mono<IntegrationView> update(@PathVariable String slug, @RequestBody UpdateRequest request) {
        Bounds.check("slug", slug);
        Bounds.check(request);
        return Mono.fromCallable(() -> {
                    if (request.name() != null && request.name().isBlank()) {
                        throw InvalidInputException.decode("`name` must not be empty");
                    }
                    return request;
                })
                .flatMap(changes -> integrations.find(slug)
                        .switchIfEmpty(Mono.error(() -> new IntegrationNotFoundException(slug)))
                        .flatMap(existing -> integrations.update(existing.withNames(changes.name(), changes.description()))))
                .map(IntegrationView::of);
    }

    /** Removes the integration with its connections, credentials and catalogs, and ends its live sessions. */
    @DeleteMapping("/{slug}")
    Mono<Map<String, Boolean>> remove(@PathVariable String slug) {
        Bounds.check("slug", slug);
        if (slug.equals(BuiltinTool.INTEGRATION)) {
            // Executor 1.5.9 answers that it removed its built-in integration, and keeps it.
            return Mono.just(Map.of("removed", true));
        }
        return integrations.delete(slug).flatMap(removed -> pool.retire(slug).then(catalogs.changed(slug)).thenReturn(Map.of("removed", removed)));
    }
}
