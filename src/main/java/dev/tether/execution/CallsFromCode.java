package dev.tether.execution;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema.ElicitRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.tether.calls.ToolCalls;
import dev.tether.calls.ToolNotFoundException;
import dev.tether.calls.builtin.InvalidToolArgumentsException;
import dev.tether.execution.Execution.Step;
import dev.tether.identity.Principals;
import dev.tether.mcp.ElicitationHandler;
import dev.tether.policy.Decision;
import dev.tether.policy.Policies;
import dev.tether.store.CatalogStore;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;
import dev.tether.store.StoredTool;

/**
 * The {@code tools.*} calls code makes, from the code's side: each is decided by the policies (blocked, held for
 * approval, or run), run through {@link ToolCalls}, and its answer handed back into the code as Executor's envelope
 * or as a rejection in Executor's words. A server's question during a call parks the call until the user answers.
 */
final class CallsFromCode {

    private static final Logger log = LoggerFactory.getLogger(CallsFromCode.class);
    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();
    private static final TypeRef<Object> ANY = new TypeRef<>() {
    };
    private static final int SUGGESTIONS = 5;

    private final ToolCalls calls;
    private final CatalogStore catalogs;
    private final Policies policies;

    CallsFromCode(ToolCalls calls, CatalogStore catalogs, Policies policies) {
        this.calls = calls;
        this.catalogs = catalogs;
        this.policies = policies;
    }

    /** Decides a call the code made: blocked, parked for approval, or run, as the policies and the tool say. */
    Mono<Step> decide(Execution execution, PendingCall call) {
        return calls.find(call.address())
                .flatMap(tool -> policies.decide(call.path(), tool.requiresApproval())
                        .map(decision -> Map.entry(tool, decision)))
                .flatMap(decided -> {
                    StoredTool tool = decided.getKey();
                    Decision decision = decided.getValue();
                    if (decision.blocked()) {
                        return resolve(execution, call, ToolEnvelopes.blocked(call.path(), decision.pattern()));
                    }
                    if (decision.needsApproval()) {
                        return execution.onLane(() -> execution.park(call.asking(ExecutionAnswers.question(call, decision, tool.approvalDescription()))));
                    }
                    return run(execution, call);
                })
                .onErrorResume(ToolNotFoundException.class, missing -> notFound(call)
                        .flatMap(envelope -> resolve(execution, call, envelope)));
    }

    /** Runs an allowed call; its answer (or failure, in Executor's words) goes back into the code. */
    Mono<Step> run(Execution execution, PendingCall call) {
        Object arguments;
        try {
            arguments = call.argsJson() == null ? Map.of() : JSON.readValue(call.argsJson(), ANY);
        }
        catch (java.io.IOException ex) {
            return resolve(execution, call, ToolEnvelopes.invalidArguments("Tool arguments are not JSON: " + ex.getMessage()));
        }
        if (!(arguments instanceof Map<?, ?> map)) {
            return resolve(execution, call, ToolEnvelopes.invalidArguments("Tool arguments must be an object."));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> args = (Map<String, Object>) map;
        // The call runs for the execution, not for the drive that started it: a drive that ends in a pause on the
        // call's own question leaves it running (cache() keeps its source when its subscriber leaves), and the drive
        // of the resume takes its answer. Closing the execution stops it.
        AtomicReference<Mono<Step>> handedOver = new AtomicReference<>();
        Mono<Outcome> outcome = calls.invoke(call.address(), args)
                .contextWrite(ElicitationHandler.of(request -> ask(execution, call, request, Mono.defer(handedOver::get))))
                .map(result -> new Outcome(ToolEnvelopes.of(result), null))
                .onErrorResume(ToolNotFoundException.class, missing -> notFound(call).map(envelope -> new Outcome(envelope, null)))
                // A runtime helper's refusal is thrown into the code with Executor's own words.
                .onErrorResume(InvalidToolArgumentsException.class, refused -> Mono.just(new Outcome(null, refused.getMessage())))
                .onErrorResume(failure -> {
                    // As Executor: the code sees an opaque message; the cause, which may quote a server's stderr, is logged.
                    String id = UUID.randomUUID().toString().substring(0, 8);
                    log.warn("tool call {} of an execution failed [{}]: {}", call.address(), id, failure.toString());
                    return Mono.just(new Outcome(null, "Internal tool error [" + id + "]"));
                })
                .takeUntilOther(execution.closing())
                .cache();
        handedOver.set(outcome.flatMap(result -> result.envelope() != null ? resolve(execution, call, result.envelope())
                : execution.onLane(() -> execution.reject(call, Objects.requireNonNull(result.rejection())))));
        return Objects.requireNonNull(handedOver.get());
    }

    /** A tool call's answer for the code: an envelope it resolves to, or a message it rejects with. */
    private record Outcome(@Nullable String envelope, @Nullable String rejection) {
    }

    /**
     * A server asks a question during a call of the execution: the call waits, out of flight, until the user
     * answers through a resume (or the execution ends, which answers {@code cancel}).
     */
    private Mono<ElicitResult> ask(Execution execution, PendingCall call, ElicitRequest request, Mono<Step> outcome) {
        Sinks.One<ElicitResult> answer = Sinks.one();
        PendingCall asking = call.eliciting(new Elicitation(request, answer, outcome));
        return Mono.fromRunnable(() -> execution.ask(asking)).subscribeOn(execution.lane()).then(answer.asMono());
    }

    private static Mono<Step> resolve(Execution execution, PendingCall call, String envelope) {
        return execution.onLane(() -> execution.resolve(call, envelope));
    }

    /** Executor's tool_not_found: with up to five tools of the same connection, those that look alike first. */
    private Mono<String> notFound(PendingCall call) {
        String path = call.path();
        String[] parts = path.split("\\.");
        if (parts.length != 4 || Owner.parse(parts[1]).isEmpty()) {
            return Mono.just(ToolEnvelopes.notFound(path, List.of()));
        }
        String prefix = parts[0] + "." + parts[1] + "." + parts[2] + ".";
        String wanted = parts[3].toLowerCase(Locale.ROOT);
        return Principals.current().map(caller -> ConnectionKey.of(Owner.parse(parts[1]).get(), parts[0], parts[2], caller))
                .flatMap(catalogs::catalog)
                .map(catalog -> {
                    List<StoredTool> sorted = new ArrayList<>(catalog.tools());
                    sorted.sort(Comparator.comparing(StoredTool::name));
                    List<StoredTool> alike = sorted.stream().filter(tool -> tool.name().toLowerCase(Locale.ROOT).contains(wanted)
                            || tool.description().toLowerCase(Locale.ROOT).contains(wanted)).toList();
                    return (alike.isEmpty() ? sorted : alike).stream().limit(SUGGESTIONS).map(tool -> prefix + tool.name()).toList();
                })
                .defaultIfEmpty(List.of())
                .map(suggestions -> ToolEnvelopes.notFound(path, suggestions));
    }
}
