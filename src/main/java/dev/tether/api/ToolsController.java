package dev.tether.api;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.api.Views.ToolView;
import dev.tether.catalog.CatalogService;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;

@RestController
final class ToolsController {

    private final CatalogService catalogs;

    ToolsController(CatalogService catalogs) {
        this.catalogs = catalogs;
    }

    /** Tools of every matching connection; a client that leaves cancels the syncs it started. */
    @GetMapping("/api/tools")
    Mono<List<ToolView>> list(@RequestParam(required = false) String integration, @RequestParam(required = false) String owner,
            @RequestParam(required = false) String connection, @RequestParam(required = false) String query) {
        String needle = query == null ? "" : query.toLowerCase(Locale.ROOT);
        return Flux.defer(() -> catalogs.tools(Inputs.optional(integration), Inputs.optionalOwner(owner), Inputs.optional(connection)))
                .flatMapIterable(ToolView::listed)
                .filter(tool -> needle.isEmpty() || tool.name().contains(needle)
                        || tool.description().toLowerCase(Locale.ROOT).contains(needle))
                .collectSortedList(Comparator.comparing(ToolView::address));
    }
}
