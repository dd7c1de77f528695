package dev.tether.api;

import java.util.Map;

import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.swagger.v3.oas.annotations.media.ArraySchema;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.tether.views.Views.ToolView;
import dev.tether.calls.ToolCalls;
import dev.tether.calls.ToolListings;
import dev.tether.calls.ToolSchemas;
import dev.tether.mcp.ToolAnswer;
import dev.tether.api.input.Bounds;
import dev.tether.api.input.Inputs;

@RestController
final class ToolsController {

    /** Body of {@code POST /api/tools/call}, Tether's own route for agents and tests. */
    public record CallRequest(String address, Map<String, Object> args) {
    }

    private final ToolCalls calls;
    private final ToolListings listings;
    private final ToolSchemas schemas;

    ToolsController(ToolCalls calls, ToolListings listings, ToolSchemas schemas) {
        this.calls = calls;
        this.listings = listings;
        this.schemas = schemas;
    }

    /** The schemas of one tool and their TypeScript, as Executor answers them. */
    @GetMapping("/api/tools/schema")
    Mono<Map<String, Object>> schema(@RequestParam(required = false) String address) {
        Bounds.check("address", address);
        return Mono.fromCallable(() -> Inputs.requireText(address, "address")).flatMap(schemas::schema);
    }

    /**
     * Calls a tool on its connection's warm session; a client that leaves cancels the call on the server too. The
     * answer is the {@code CallToolResult} as the tool's server wrote it.
     */
    @PostMapping(value = "/api/tools/call", produces = MediaType.APPLICATION_JSON_VALUE)
    @ApiResponse(responseCode = "200", description = "OK", content = @Content(schema = @Schema(implementation = CallToolResult.class)))
    Mono<String> call(@RequestBody CallRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> Inputs.requireText(request.address(), "address"))
                .flatMap(address -> calls.call(address, request.args() == null ? Map.of() : request.args()))
                .map(ToolAnswer::json);
    }

    /**
     * Executor's built-in tools, then the tools of every matching connection, as 1.5.9 orders them; a client that
     * leaves cancels the syncs it started. The answer is JSON encoded ahead by {@link ToolListings}.
     */
    @GetMapping(value = "/api/tools", produces = MediaType.APPLICATION_JSON_VALUE)
    @ApiResponse(responseCode = "200", description = "OK",
            content = @Content(array = @ArraySchema(schema = @Schema(implementation = ToolView.class))))
    Mono<byte[]> list(@RequestParam(required = false) String integration, @RequestParam(required = false) String owner,
            @RequestParam(required = false) String connection, @RequestParam(required = false) String query,
            @RequestParam(required = false) String includeAnnotations, @RequestParam(required = false) String includeBlocked) {
        Bounds.check("integration", integration);
        Bounds.check("owner", owner);
        Bounds.check("connection", connection);
        Bounds.check("query", query);
        Bounds.check("includeAnnotations", includeAnnotations);
        Bounds.check("includeBlocked", includeBlocked);
        // Executor 1.5.9 lists annotations whether or not includeAnnotations asks for them; the flag is still checked.
        return Mono.fromCallable(() -> Inputs.flag(includeAnnotations))
                .map(ignored -> new ToolListings.Selection(Inputs.optional(integration), Inputs.optionalOwner(owner),
                        Inputs.optional(connection), Inputs.flag(includeBlocked)))
                .flatMap(selection -> listings.list(selection, query == null ? "" : query));
    }
}
