package dev.tether.api;

import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.api.Views.ToolView;
import dev.tether.calls.ToolCalls;
import dev.tether.catalog.CatalogService;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

@RestController
final class ToolsController {

    /** Body of {@code POST /api/tools/call}, Tether's own route for agents and tests. */
    record CallRequest(String address, Map<String, Object> args) {
    }

    private final CatalogService catalogs;
    private final ToolCalls calls;

    ToolsController(CatalogService catalogs, ToolCalls calls) {
        this.catalogs = catalogs;
        this.calls = calls;
    }

    record SchemaView(String address, String name, String description, Object inputSchema, Object outputSchema) {
    }

    /** The schemas of one tool, from the stored catalog. */
    @GetMapping("/api/tools/schema")
    Mono<SchemaView> schema(@RequestParam(required = false) String address) {
        Bounds.check("address", address);
        return Mono.fromCallable(() -> Inputs.requireText(address, "address"))
                .flatMap(calls::find)
                .map(tool -> new SchemaView(address, tool.name(), tool.description(), tool.inputSchema(), tool.outputSchema()));
    }

    /** Calls a tool on its connection's warm session; a client that leaves cancels the call on the server too. */
    @PostMapping("/api/tools/call")
    Mono<CallToolResult> call(@RequestBody CallRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> Inputs.requireText(request.address(), "address"))
                .flatMap(address -> calls.call(address, request.args() == null ? Map.of() : request.args()));
    }

    /** Tools of every matching connection; a client that leaves cancels the syncs it started. */
    @GetMapping("/api/tools")
    Mono<List<ToolView>> list(@RequestParam(required = false) String integration, @RequestParam(required = false) String owner,
            @RequestParam(required = false) String connection, @RequestParam(required = false) String query,
            @RequestParam(required = false) String includeAnnotations, @RequestParam(required = false) String includeBlocked) {
        Bounds.check("integration", integration);
        Bounds.check("owner", owner);
        Bounds.check("connection", connection);
        Bounds.check("query", query);
        Bounds.check("includeAnnotations", includeAnnotations);
        Bounds.check("includeBlocked", includeBlocked);
        // Tether has no tool policies, so nothing is ever blocked and includeBlocked changes nothing.
        String needle = query == null ? "" : query.toLowerCase(Locale.ROOT);
        return Flux.defer(() -> catalogs.tools(Inputs.optional(integration), Inputs.optionalOwner(owner), Inputs.optional(connection)))
                .flatMapIterable(tools -> ToolView.listed(tools, Inputs.flag(includeAnnotations)))
                .filter(tool -> needle.isEmpty() || tool.name().contains(needle)
                        || tool.description().toLowerCase(Locale.ROOT).contains(needle))
                .collectSortedList(Comparator.comparing(ToolView::address));
    }
}
