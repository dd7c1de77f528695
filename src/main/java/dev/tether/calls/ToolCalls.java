package dev.tether.calls;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.calls.builtin.BuiltinTool;
import dev.tether.calls.builtin.BuiltinTools;
import dev.tether.calls.builtin.InvalidToolArgumentsException;
import dev.tether.mcp.McpTimeoutException;
import dev.tether.session.SessionPool;
import dev.tether.store.CatalogStore;
import dev.tether.store.StoredTool;

/**
 * Agent tool calls, on the connection's pooled session. A call that is cancelled or times out is abandoned
 * with {@code notifications/cancelled}; the session stays warm for the next call. Executor's built-in tools
 * ({@code tools.executor.…}, {@code tools.search}, {@code tools.describe.tool}) are reached here too, by the same
 * names, and answered by {@link BuiltinTools}.
 */
@Component
public final class ToolCalls {

    private final SessionPool sessions;
    private final CatalogStore catalogs;
    private final BuiltinTools builtins;
    private final JsonMapper json;
    private final MeterRegistry registry;

    public ToolCalls(SessionPool sessions, CatalogStore catalogs, BuiltinTools builtins, JsonMapper json, MeterRegistry registry) {
        this.sessions = sessions;
        this.catalogs = catalogs;
        this.builtins = builtins;
        this.json = json;
        this.registry = registry;
    }

    /**
     * Calls the tool at {@code address}; fails with {@link ToolNotFoundException} when no stored catalog has it. A
     * built-in answers its value as structured content, with its JSON as the one text content.
     */
    public Mono<CallToolResult> call(String address, Map<String, Object> arguments) {
        Optional<BuiltinTool> builtin = builtin(address);
        if (builtin.isPresent()) {
            return builtins.run(builtin.get(), arguments)
                    .map(this::asResult)
                    .onErrorResume(InvalidToolArgumentsException.class, refused -> Mono.just(CallToolResult.builder()
                            .addTextContent(refused.getMessage()).isError(true).build()));
        }
        return Mono.fromCallable(() -> ToolAddress.parse(address))
                .flatMap(parsed -> find(parsed, address).flatMap(tool -> call(parsed, tool, arguments)));
    }

    /**
     * The tool at {@code address}; fails with {@link ToolNotFoundException} when there is none. A built-in is
     * described as a stored tool: its path as the server name, its approval annotation as {@code requiresApproval}.
     */
    public Mono<StoredTool> find(String address) {
        Optional<BuiltinTool> builtin = builtin(address);
        if (builtin.isPresent()) {
            BuiltinTool tool = builtin.get();
            return Mono.just(new StoredTool(tool.name(), tool.path(), tool.description(), Boolean.TRUE.equals(tool.requiresApproval()),
                    tool.inputSchema(), tool.outputSchema()));
        }
        return Mono.fromCallable(() -> ToolAddress.parse(address)).flatMap(parsed -> find(parsed, address));
    }

    /**
     * What {@code await tools.<path>(args)} resolves to in Executor 1.5.9's code runtime, for {@code path} as the
     * code names it (see {@link ToolAddress#path}): an MCP tool's answer as {@code {ok: true, data: <CallToolResult>}},
     * a listed built-in's as {@code {ok: true, data}}, a runtime helper's ({@code search}, {@code describe.tool},
     * {@code executor.sources.list}) as it is, and for a path that names no tool
     * {@code {ok: false, error: {code: "tool_not_found", …}}}. It fails only where Executor's code would throw: with
     * {@link InvalidToolArgumentsException} for arguments a runtime helper cannot take, or with the failure of the call.
     */
    public Mono<Object> invoke(String path, Object arguments) {
        String canonical = ToolAddress.path(path);
        Optional<BuiltinTool> builtin = builtins.find(canonical);
        if (builtin.isPresent()) {
            BuiltinTool tool = builtin.get();
            Mono<Object> answer = builtins.run(tool, arguments);
            return tool.runtime() ? answer : answer.<Object>map(ToolCalls::ok).onErrorResume(InvalidToolArgumentsException.class,
                    refused -> Mono.just(invalidArguments(refused.getMessage())));
        }
        Optional<ToolAddress> address = ToolAddress.of("tools." + canonical);
        if (address.isEmpty()) {
            return Mono.<Object>just(notFound(canonical, List.of()));
        }
        if (arguments != null && !(arguments instanceof Map<?, ?>)) {
            return Mono.<Object>just(invalidArguments("tools." + canonical + " expects an object"));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> args = arguments == null ? Map.of() : (Map<String, Object>) arguments;
        return catalogs.catalog(address.get().connection())
                .flatMap(catalog -> Mono.justOrEmpty(catalog.tools().stream().filter(t -> t.name().equals(address.get().tool())).findFirst()))
                .flatMap(tool -> call(address.get(), tool, args).<Object>map(result -> ok(json.convertValue(result, Map.class))))
                .switchIfEmpty(Mono.defer(() -> builtins.suggestions(canonical).<Object>map(suggestions -> notFound(canonical, suggestions))));
    }

    private Optional<BuiltinTool> builtin(String address) {
        return address == null ? Optional.empty() : builtins.find(ToolAddress.path(address));
    }

    private CallToolResult asResult(Object value) {
        Map<?, ?> structured = value instanceof Map<?, ?> map ? map : Map.of("result", value);
        return CallToolResult.builder().content(List.of(new TextContent(json.writerWithDefaultPrettyPrinter().writeValueAsString(value))))
                .structuredContent(structured).isError(false).build();
    }

    private static Map<String, Object> ok(Object data) {
        Map<String, Object> ok = new LinkedHashMap<>();
        ok.put("ok", true);
        ok.put("data", data);
        return ok;
    }

    private static Map<String, Object> failure(String code, String message, Map<String, Object> details) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", message);
        error.put("details", details);
        Map<String, Object> failure = new LinkedHashMap<>();
        failure.put("ok", false);
        failure.put("error", error);
        return failure;
    }

    private static Map<String, Object> notFound(String path, List<String> suggestions) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("path", path);
        if (!suggestions.isEmpty()) {
            details.put("suggestions", suggestions);
        }
        return failure("tool_not_found", "Tool not found: " + path, details);
    }

    private static Map<String, Object> invalidArguments(String message) {
        return failure("invalid_tool_arguments", "Tool arguments did not match the input schema.",
                Map.of("issues", List.of(Map.of("message", message))));
    }

    private Mono<StoredTool> find(ToolAddress parsed, String address) {
        return catalogs.catalog(parsed.connection())
                .flatMap(catalog -> Mono.justOrEmpty(catalog.tools().stream().filter(t -> t.name().equals(parsed.tool())).findFirst()))
                .switchIfEmpty(Mono.error(() -> new ToolNotFoundException(address, "no stored catalog has this tool")));
    }

    private Mono<CallToolResult> call(ToolAddress address, StoredTool tool, Map<String, Object> arguments) {
        Timer.Sample timing = Timer.start(registry);
        return sessions.withSession(address.connection(), session -> session.callTool(tool.serverName(), arguments)
                        .map(Outcome::answered)
                        // Abandoned with notifications/cancelled: the tool was slow, not the server broken. Failing
                        // the lease with it would retire the warm session, so the timeout leaves the lease first.
                        .onErrorResume(McpTimeoutException.class, timeout -> Mono.just(Outcome.timedOut(timeout))))
                .flatMap(Outcome::result)
                .doOnNext(result -> timing.stop(timer(Boolean.TRUE.equals(result.isError()) ? "tool_error" : "ok")))
                .doOnError(error -> timing.stop(timer("failed")))
                .doOnCancel(() -> timing.stop(timer("cancelled")));
    }

    /** A call's answer, or the timeout it ran into. */
    private record Outcome(CallToolResult answer, McpTimeoutException timeout) {

        static Outcome answered(CallToolResult answer) {
            return new Outcome(answer, null);
        }

        static Outcome timedOut(McpTimeoutException timeout) {
            return new Outcome(null, timeout);
        }

        Mono<CallToolResult> result() {
            return timeout == null ? Mono.just(answer) : Mono.error(timeout);
        }
    }

    private Timer timer(String outcome) {
        return Timer.builder("tether.calls").tag("outcome", outcome).description("agent tool calls").register(registry);
    }
}
