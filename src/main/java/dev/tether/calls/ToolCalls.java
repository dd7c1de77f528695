package dev.tether.calls;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import dev.tether.metrics.OutcomeTimers;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Content;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.calls.builtin.BuiltinTool;
import dev.tether.calls.builtin.BuiltinTools;
import dev.tether.calls.builtin.BuiltinToolFailure;
import dev.tether.calls.builtin.InvalidToolArgumentsException;
import dev.tether.catalog.CatalogService;
import dev.tether.mcp.AuthorizationExpiredException;
import dev.tether.mcp.McpTimeoutException;
import dev.tether.identity.Audit;
import dev.tether.identity.AuditEvent;
import dev.tether.identity.NotPermittedException;
import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.mcp.ToolAnswer;
import dev.tether.session.SessionPool;
import dev.tether.store.ConnectionKey;
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

    private static final McpJsonMapper MCP_JSON = McpJsonDefaults.getMapper();
    private static final TypeRef<Map<String, Object>> MAP = new TypeRef<>() {
    };

    private final SessionPool sessions;
    private final SourceCalls sources;
    private final CatalogStore catalogs;
    private final BuiltinTools builtins;
    private final CatalogService catalogSyncs;
    private final JsonMapper json;
    private final OutcomeTimers timers;
    private final OwnerCalls owners;
    private final Audit audit;

    public ToolCalls(SessionPool sessions, SourceCalls sources, CatalogStore catalogs, BuiltinTools builtins,
            CatalogService catalogSyncs, JsonMapper json, MeterRegistry registry, OwnerCalls owners, Audit audit) {
        this.audit = audit;
        this.sessions = sessions;
        this.sources = sources;
        this.catalogs = catalogs;
        this.builtins = builtins;
        this.catalogSyncs = catalogSyncs;
        this.json = json;
        this.timers = new OutcomeTimers("tether.calls", "agent tool calls", registry);
        this.owners = owners;
    }

    /**
     * Calls the tool at {@code address}; fails with {@link ToolNotFoundException} when no stored catalog has it. A
     * built-in answers its value as structured content, with its JSON as the one text content. A stdio server's answer
     * comes as it wrote it.
     */
    public Mono<ToolAnswer> call(String address, Map<String, Object> arguments) {
        return audited(address, call(address, arguments, false), ToolCalls::outcome);
    }

    /**
     * As {@link #call(String, Map)}, on the replica that owns the connection when that is another: for
     * callers inside this replica ({@code /mcp}'s {@code tools/call}), whose requests no API route has passed to the owner.
     */
    public Mono<ToolAnswer> callAtOwner(String address, Map<String, Object> arguments) {
        return audited(address, call(address, arguments, true), ToolCalls::outcome);
    }

    /**
     * The call in the audit trail ({@code tool.call}): its address and how it ended, with the caller's principal; never its
     * arguments or its answer.
     */
    private <T> Mono<T> audited(String address, Mono<T> call, java.util.function.Function<T, String> outcome) {
        return Mono.deferContextual(context -> {
            Principal caller = Principals.of(context);
            return call.doOnSuccess(answer -> audit.record(AuditEvent.of(caller, "tool.call", address,
                            answer == null ? "empty" : outcome.apply(answer))))
                    .doOnError(failed -> audit.record(new AuditEvent(java.time.Instant.now(), caller, "tool.call", address,
                            failed instanceof NotPermittedException ? "refused" : failed instanceof ToolNotFoundException ? "not_found"
                                    : "failed", null, failed.getClass().getSimpleName())))
                    .doOnCancel(() -> audit.record(AuditEvent.of(caller, "tool.call", address, "cancelled")));
        });
    }

    private static String outcome(ToolAnswer answer) {
        return answer.isError() ? "tool_error" : "ok";
    }

    /** Executor's envelope ({@code {ok: false, …}}) or a runtime helper's value, as the trail names its end. */
    private static String envelopeOutcome(Object answer) {
        return answer instanceof Map<?, ?> envelope && Boolean.FALSE.equals(envelope.get("ok")) ? "tool_error" : "ok";
    }

    private Mono<ToolAnswer> call(String address, Map<String, Object> arguments, boolean atOwner) {
        Optional<BuiltinTool> builtin = builtin(address);
        if (builtin.isPresent()) {
            return mayCall(address).then(Mono.defer(() -> builtins.run(builtin.get(), arguments)))
                    .map(this::asResult)
                    .onErrorResume(InvalidToolArgumentsException.class, refused -> Mono.just(CallToolResult.builder()
                            .addTextContent(refused.getMessage()).isError(true).build()))
                    .onErrorResume(BuiltinToolFailure.class, failed -> Mono.just(CallToolResult.builder()
                            .addTextContent(failed.getMessage()).isError(true).build()))
                    .map(ToolAnswer::of);
        }
        return mayCall(address).then(target(address))
                .flatMap(parsed -> find(parsed, address).flatMap(tool -> sources.source(parsed.connection())
                        .flatMap(integration -> timed(sources.invoke(integration, parsed.connection(), tool, arguments))
                                .map(this::sourceResult))
                        .switchIfEmpty(Mono.defer(() -> atOwner ? atOwner(parsed, tool, address, arguments)
                                : call(parsed, tool, arguments)))));
    }

    /** A tool of a connection, as the calling principal names it: {@code user} is its own. */
    private record Target(ConnectionKey connection, String tool) {
    }

    private static Mono<Target> target(String address) {
        return Principals.current().map(caller -> {
            ToolAddress parsed = ToolAddress.parse(address);
            return new Target(parsed.connection(caller), parsed.tool());
        });
    }

    /** A viewer reads and calls nothing: a call may change what the tool reaches. */
    private static Mono<Void> mayCall(String address) {
        return Principals.current().flatMap(caller -> caller.mayUse() ? Mono.<Void>empty()
                : Mono.error(new NotPermittedException(caller, "call tools (" + address + ")")));
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
                    tool.inputSchema(), tool.outputSchema(), tool.pluginId(), tool.approvalDescription()));
        }
        return target(address).flatMap(parsed -> find(parsed, address));
    }

    /**
     * What {@code await tools.<path>(args)} resolves to in Executor 1.5.9's code runtime, for {@code path} as the
     * code names it (see {@link ToolAddress#path}): an MCP tool's answer as {@code {ok: true, data: <CallToolResult>}}
     * (or {@code {ok: false, error: {code: "mcp_tool_error"}}} when the server answered {@code isError}, {@code
     * "connection_rejected"} when its OAuth grant must be authorized again), a listed
     * built-in's as {@code {ok: true, data}}, a runtime helper's ({@code search}, {@code describe.tool},
     * {@code executor.sources.list}) as it is. Fails with {@link ToolNotFoundException} when no tool has this path,
     * with {@link InvalidToolArgumentsException} for arguments a runtime helper cannot take (Executor throws those
     * into the code), or with the failure of the call.
     */
    public Mono<Object> invoke(String path, Object arguments) {
        return audited(ToolAddress.path(path), invoked(path, arguments), ToolCalls::envelopeOutcome);
    }

    private Mono<Object> invoked(String path, Object arguments) {
        String canonical = ToolAddress.path(path);
        Optional<BuiltinTool> builtin = builtins.find(canonical);
        if (builtin.isPresent()) {
            BuiltinTool tool = builtin.get();
            Mono<Object> answer = mayCall(canonical).then(Mono.defer(() -> builtins.run(tool, arguments)));
            return tool.runtime() ? answer : answer.<Object>map(CallEnvelope::ok).onErrorResume(InvalidToolArgumentsException.class,
                    refused -> Mono.just(CallEnvelope.failure("invalid_tool_arguments", "Tool arguments did not match the input schema.",
                            Map.of("issues", List.of(Map.of("message", refused.getMessage()))))))
                    .onErrorResume(BuiltinToolFailure.class, failed -> Mono.just(CallEnvelope.failure(failed.code(), failed.getMessage(), null)));
        }
        String address = "tools." + canonical;
        if (arguments != null && !(arguments instanceof Map<?, ?>)) {
            return Mono.error(new InvalidToolArgumentsException(address + " expects an object"));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> args = arguments == null ? Map.of() : (Map<String, Object>) arguments;
        return mayCall(address).then(target(address))
                .flatMap(parsed -> find(parsed, address).flatMap(tool -> sources.source(parsed.connection())
                        .flatMap(integration -> timed(sources.invoke(integration, parsed.connection(), tool, args)))
                        .<Object>map(answer -> answer)
                        .switchIfEmpty(Mono.defer(() -> atOwner(parsed, tool, address, args).map(ToolCalls::envelope)
                                // as an HTTP source's (SourceCalls): the code learns that the user must authorize the
                                // connection again, and for which scope, rather than an opaque internal error
                                .onErrorResume(AuthorizationExpiredException.class, expired -> Mono.just(
                                        CallEnvelope.failure("connection_rejected", expired.getMessage(), null)))))));
    }

    /**
     * A call from inside this replica, on its connection's owner: here, or over HTTP at the replica that owns it. Only
     * for those: a call that reached {@link #call(String, Map)} was already routed by the API (or forwarded here), and
     * routing it again could pass it back and forth between two replicas whose lease snapshots differ.
     */
    private Mono<ToolAnswer> atOwner(Target parsed, StoredTool tool, String address, Map<String, Object> args) {
        Mono<ToolAnswer> here = Mono.defer(() -> call(parsed, tool, args));
        return owners.atOwner(parsed.connection(), address, args, here)
                .map(this::timedCall)
                .orElse(here);
    }

    /** An HTTP source's answer as an MCP tool result: its data as JSON text, the whole {@code ToolResult} as structured content. */
    private ToolAnswer sourceResult(Map<String, Object> answer) {
        boolean ok = Boolean.TRUE.equals(answer.get("ok"));
        String text;
        if (ok) {
            text = json.writerWithDefaultPrettyPrinter().writeValueAsString(answer.get("data"));
        }
        else {
            text = String.valueOf(((Map<?, ?>) Objects.requireNonNull(answer.get("error"))).get("message"));
        }
        return ToolAnswer.of(CallToolResult.builder().content(List.of(new TextContent(text))).structuredContent(answer).isError(!ok).build());
    }

    private Mono<Map<String, Object>> timed(Mono<Map<String, Object>> call) {
        Timer.Sample timing = timers.start();
        return call.doOnNext(answer -> timing.stop(timers.timer(Boolean.TRUE.equals(answer.get("ok")) ? "ok" : "tool_error")))
                .doOnError(error -> timing.stop(timers.timer("failed")))
                .doOnCancel(() -> timing.stop(timers.timer("cancelled")));
    }

    /** An MCP answer as code sees it: as the server sent it, through the MCP mapper, which writes each content's type. */
    private static Object envelope(ToolAnswer answer) {
        CallToolResult result = answer.result();
        Map<String, Object> data = new LinkedHashMap<>(MCP_JSON.convertValue(result, MAP));
        if (Boolean.TRUE.equals(result.isError())) {
            return CallEnvelope.failure("mcp_tool_error", firstText(result.content()), Map.of("content", data.getOrDefault("content", List.of())));
        }
        data.remove("isError"); // the server's {isError: false} is implied by ok: true
        return CallEnvelope.ok(data);
    }

    private static String firstText(List<Content> content) {
        if (content != null) {
            for (Content item : content) {
                if (item instanceof TextContent text && text.text() != null && !text.text().isEmpty()) {
                    return text.text();
                }
            }
        }
        return "MCP tool returned an error";
    }

    private Optional<BuiltinTool> builtin(String address) {
        return address == null ? Optional.empty() : builtins.find(ToolAddress.path(address));
    }

    private CallToolResult asResult(Object value) {
        Map<?, ?> structured = value instanceof Map<?, ?> map ? map : Map.of("result", value);
        return CallToolResult.builder().content(List.of(new TextContent(json.writerWithDefaultPrettyPrinter().writeValueAsString(value))))
                .structuredContent(structured).isError(false).build();
    }

    /** From the stored catalog; when it lacks the tool and is stale, from a sync awaited whole. */
    private Mono<StoredTool> find(Target parsed, String address) {
        return catalogs.tool(parsed.connection(), parsed.tool())
                .switchIfEmpty(Mono.defer(() -> catalogSyncs.syncIfStale(parsed.connection())
                        .flatMap(synced -> named(synced.tools(), parsed.tool()))))
                .switchIfEmpty(Mono.error(() -> new ToolNotFoundException(address, "no stored catalog has this tool")));
    }

    private static Mono<StoredTool> named(List<StoredTool> tools, String name) {
        return Mono.justOrEmpty(tools.stream().filter(tool -> tool.name().equals(name)).findFirst());
    }

    private Mono<ToolAnswer> call(Target address, StoredTool tool, Map<String, Object> arguments) {
        return timedCall(sessions.withSession(address.connection(), session -> session.callTool(tool.serverName(), arguments)
                        .map(Outcome::answered)
                        // Abandoned with notifications/cancelled: the tool was slow, not the server broken. Failing
                        // the lease with it would retire the warm session, so the timeout leaves the lease first.
                        .onErrorResume(McpTimeoutException.class, timeout -> Mono.just(Outcome.timedOut(timeout))))
                .flatMap(Outcome::result));
    }

    private Mono<ToolAnswer> timedCall(Mono<ToolAnswer> call) {
        Timer.Sample timing = timers.start();
        return call
                .doOnNext(answer -> timing.stop(timers.timer(answer.isError() ? "tool_error" : "ok")))
                .doOnError(error -> timing.stop(timers.timer("failed")))
                .doOnCancel(() -> timing.stop(timers.timer("cancelled")));
    }

    /** A call's answer, or the timeout it ran into. */
    private record Outcome(@Nullable ToolAnswer answer, @Nullable McpTimeoutException timeout) {

        static Outcome answered(ToolAnswer answer) {
            return new Outcome(answer, null);
        }

        static Outcome timedOut(McpTimeoutException timeout) {
            return new Outcome(null, timeout);
        }

        Mono<ToolAnswer> result() {
            return timeout == null ? Mono.just(Objects.requireNonNull(answer)) : Mono.error(timeout);
        }
    }

}
