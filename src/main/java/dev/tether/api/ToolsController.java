package dev.tether.api;

import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.tether.api.Views.ToolView;
import dev.tether.calls.ToolAddress;
import dev.tether.calls.ToolCalls;
import dev.tether.calls.builtin.BuiltinTool;
import dev.tether.calls.builtin.BuiltinTools;
import dev.tether.store.Owner;
import dev.tether.catalog.CatalogService;
import dev.tether.policy.Policies;
import dev.tether.store.Policy;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

@RestController
final class ToolsController {

    /** Body of {@code POST /api/tools/call}, Tether's own route for agents and tests. */
    record CallRequest(String address, Map<String, Object> args) {
    }

    private final CatalogService catalogs;
    private final ToolCalls calls;
    private final BuiltinTools builtins;
    private final Policies policies;

    ToolsController(CatalogService catalogs, ToolCalls calls, BuiltinTools builtins, Policies policies) {
        this.catalogs = catalogs;
        this.calls = calls;
        this.builtins = builtins;
        this.policies = policies;
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

    /**
     * Executor's built-in tools, then the tools of every matching connection, as 1.5.9 orders them; a client that
     * leaves cancels the syncs it started.
     */
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
        String needle = query == null ? "" : query.toLowerCase(Locale.ROOT);
        // Tools a policy blocks are left out unless asked for, as Executor does.
        Mono<List<Policy>> blocking = Inputs.flag(includeBlocked) ? Mono.just(List.of()) : policies.list().collectList();
        return blocking.flatMap(rules -> Mono.defer(() -> {
            Optional<String> inIntegration = Inputs.optional(integration);
            Optional<Owner> ofOwner = Inputs.optionalOwner(owner);
            Optional<String> onConnection = Inputs.optional(connection);
            boolean wantsBuiltins = inIntegration.map(BuiltinTool.INTEGRATION::equals).orElse(true)
                    && ofOwner.map(o -> o.wire().equals(BuiltinTool.OWNER)).orElse(true)
                    && onConnection.map(BuiltinTool.CONNECTION::equals).orElse(true);
            List<ToolView> listedBuiltins = wantsBuiltins ? builtins.listed().stream().map(ToolView::of).toList() : List.of();
            return catalogs.tools(inIntegration, ofOwner, onConnection)
                    .flatMapIterable(tools -> ToolView.listed(tools, Inputs.flag(includeAnnotations)))
                    .collectSortedList(Comparator.comparing(ToolView::address))
                    .map(connected -> Stream.concat(listedBuiltins.stream(), connected.stream())
                            .filter(tool -> rules.isEmpty() || !Policies.decide(ToolAddress.path(tool.address()), false, rules).blocked())
                            .filter(tool -> needle.isEmpty() || tool.name().toLowerCase(Locale.ROOT).contains(needle)
                                    || tool.description().toLowerCase(Locale.ROOT).contains(needle))
                            .toList());
        }));
    }
}
