package dev.tether.calls;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.mcp.McpTimeoutException;
import dev.tether.session.SessionPool;
import dev.tether.store.CatalogStore;
import dev.tether.store.StoredTool;

/**
 * Agent tool calls, on the connection's pooled session. A call that is cancelled or times out is abandoned
 * with {@code notifications/cancelled}; the session stays warm for the next call.
 */
@Component
public final class ToolCalls {

    private final SessionPool sessions;
    private final CatalogStore catalogs;
    private final MeterRegistry registry;
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();

    public ToolCalls(SessionPool sessions, CatalogStore catalogs, MeterRegistry registry) {
        this.sessions = sessions;
        this.catalogs = catalogs;
        this.registry = registry;
    }

    /** Calls the tool at {@code address}; fails with {@link ToolNotFoundException} when no stored catalog has it. */
    public Mono<CallToolResult> call(String address, Map<String, Object> arguments) {
        return Mono.fromCallable(() -> ToolAddress.parse(address))
                .flatMap(parsed -> find(parsed, address).flatMap(tool -> call(parsed, tool, arguments)));
    }

    /** The stored tool at {@code address}; fails with {@link ToolNotFoundException} when there is none. */
    public Mono<StoredTool> find(String address) {
        return Mono.fromCallable(() -> ToolAddress.parse(address)).flatMap(parsed -> find(parsed, address));
    }

    private Mono<StoredTool> find(ToolAddress parsed, String address) {
        return catalogs.tool(parsed.connection(), parsed.tool())
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
        return timers.computeIfAbsent(outcome, o -> Timer.builder("tether.calls").tag("outcome", o)
                .description("agent tool calls").register(registry));
    }
}
