package dev.tether.execution;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.tether.calls.ToolCalls;
import dev.tether.calls.builtin.InvalidToolArgumentsException;
import dev.tether.calls.ToolNotFoundException;
import dev.tether.execution.Execution.Settled;
import dev.tether.execution.Execution.Step;
import dev.tether.policy.Decision;
import dev.tether.policy.Policies;
import dev.tether.store.CatalogStore;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;
import dev.tether.store.StoredTool;

/**
 * Runs code sent to {@code POST /api/executions} in a sandboxed GraalJS context, with {@code tools.…(args)} calls
 * going through {@link ToolCalls} like every other call. A drive of an execution (the first run, each resume)
 * owns the tool calls it starts: cancelling it (the client left) cancels them, and the servers get
 * {@code notifications/cancelled}. A call that needs approval pauses the execution once nothing else is in
 * flight; the paused execution waits in {@link PausedExecutions} holding no thread.
 */
@Component
public final class Executions implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(Executions.class);
    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();
    private static final TypeRef<Object> ANY = new TypeRef<>() {
    };
    /** Executor's preview bounds: the answer text and the arguments shown in an approval. */
    private static final int MAX_TEXT_CHARS = 30_000;
    private static final int MAX_ARGUMENT_PREVIEW_CHARS = 4_000;
    private static final int SUGGESTIONS = 5;
    private static final String REQUESTED_SCHEMA = "{\"type\":\"object\",\"properties\":{}}";

    private final JsEngine engine;
    private final ToolCalls calls;
    private final CatalogStore catalogs;
    private final Policies policies;
    private final ExecutionProperties properties;
    private final PausedExecutions paused;
    private final Scheduler js = Schedulers.boundedElastic();

    @Autowired
    Executions(JsEngine engine, ToolCalls calls, CatalogStore catalogs, Policies policies, ExecutionProperties properties) {
        this(engine, calls, catalogs, policies, properties, Schedulers.parallel());
    }

    Executions(JsEngine engine, ToolCalls calls, CatalogStore catalogs, Policies policies, ExecutionProperties properties,
            Scheduler timer) {
        this.engine = engine;
        this.calls = calls;
        this.catalogs = catalogs;
        this.policies = policies;
        this.properties = properties;
        this.paused = new PausedExecutions(properties.maxPaused(), properties.pausedExpiry(), timer);
    }

    /** Runs {@code code} until it completes or pauses for an approval. Cancelling ends it and its tool calls. */
    public Mono<ExecutionAnswer> execute(String code) {
        return Mono.defer(() -> {
            Execution execution = new Execution(properties.maxOutput().toBytes());
            // Opening (the engine too, on the first execution) is not the code's time: it runs before the drive.
            return Mono.usingWhen(Mono.just(execution),
                    opened -> Mono.fromSupplier(() -> opened.open(engine)).subscribeOn(js).then(own(opened, () -> opened.start(code)))
                            .onErrorResume(JsUnavailableException.class, unavailable -> Mono.just(
                                    completed(opened, new Settled(false, null, null, "Error: " + unavailable.getMessage())))),
                    opened -> Mono.empty(), (opened, error) -> close(opened), this::close);
        });
    }

    /** What a paused execution waits for; fails with {@link ExecutionNotFoundException} when none has this id. */
    public Mono<ExecutionAnswer.Pause> paused(String executionId) {
        return Mono.fromCallable(() -> paused.view(executionId));
    }

    /**
     * Answers the approval a paused execution waits for: accept runs the call, decline and cancel make it fail
     * in the code (as in Executor, the code may catch that). Runs on until the code completes or pauses again.
     */
    public Mono<ExecutionAnswer> resume(String executionId, ResumeAction action) {
        return Mono.fromCallable(() -> paused.take(executionId)).flatMap(pause -> {
            Execution execution = pause.execution();
            PendingCall call = pause.call();
            execution.unpark(call);
            return own(execution, () -> action == ResumeAction.ACCEPT
                    ? execution.dispatch(call.approve())
                    : execution.reject(call, "Tool \"" + call.path() + "\" requires approval but the request was "
                            + (action == ResumeAction.CANCEL ? "cancelled" : "declined") + " by the user."));
        });
    }

    /** Executions that wait for an approval now. */
    public int pausedCount() {
        return paused.size();
    }

    /** The drive owns the execution: it is closed on every exit except a pause, which {@link #paused} then owns. */
    private Mono<ExecutionAnswer> own(Execution execution, Supplier<Step> first) {
        return Mono.usingWhen(Mono.just(execution), owned -> drive(owned, first),
                owned -> owned.pausedFor() ? Mono.empty() : close(owned),
                (owned, error) -> close(owned),
                this::close);
    }

    private Mono<Void> close(Execution execution) {
        // Closing waits for code still running on another thread to stop; not on the caller's thread.
        return Mono.<Void>fromRunnable(execution::close).subscribeOn(js);
    }

    private Mono<ExecutionAnswer> drive(Execution execution, Supplier<Step> first) {
        return Mono.defer(() -> {
            Sinks.Many<PendingCall> started = Sinks.many().unicast().onBackpressureBuffer();
            execution.attach(started);
            return Flux.merge(enter(execution, first), started.asFlux().flatMap(call -> handle(execution, call)))
                    .next()
                    .timeout(properties.timeout())
                    .onErrorResume(TimeoutException.class, timeout -> close(execution).thenReturn(
                            completed(execution, new Settled(false, null, null,
                                    "Error: the execution timed out after " + properties.timeout().toMillis() + "ms"))));
        });
    }

    /** Runs one entry into the code off the caller's thread; answers when the execution completed or paused. */
    private Mono<ExecutionAnswer> enter(Execution execution, Supplier<Step> entry) {
        return Mono.fromSupplier(entry).subscribeOn(js).flatMap(step -> answer(execution, step));
    }

    private Mono<ExecutionAnswer> answer(Execution execution, Step step) {
        if (step.settled() != null) {
            return Mono.just(completed(execution, step.settled()));
        }
        if (!step.quiet()) {
            return Mono.empty();
        }
        if (step.parked() != null) {
            return Mono.fromCallable(() -> pause(execution, step.parked()))
                    .onErrorResume(PausedExecutions.TooManyPausedException.class, full -> Mono.just(
                            completed(execution, new Settled(false, null, null, "Error: " + full.getMessage()))));
        }
        return Mono.just(completed(execution, new Settled(false, null, null,
                "Error: the code awaits a promise that nothing will settle")));
    }

    // ---- tool calls ------------------------------------------------------------------------------

    private Mono<ExecutionAnswer> handle(Execution execution, PendingCall call) {
        Mono<Step> step = call.approved() ? run(execution, call) : decide(execution, call);
        return step.flatMap(next -> answer(execution, next));
    }

    private Mono<Step> decide(Execution execution, PendingCall call) {
        return calls.find(call.address())
                .flatMap(tool -> policies.decide(call.path(), tool.requiresApproval()))
                .flatMap(decision -> {
                    if (decision.blocked()) {
                        return resolve(execution, call, ToolEnvelopes.blocked(call.path(), decision.pattern()));
                    }
                    if (decision.needsApproval()) {
                        return park(execution, call.asking(question(call, decision)));
                    }
                    return run(execution, call);
                })
                .onErrorResume(ToolNotFoundException.class, missing -> notFound(call)
                        .flatMap(envelope -> resolve(execution, call, envelope)));
    }

    private Mono<Step> park(Execution execution, PendingCall parked) {
        return Mono.fromSupplier(() -> execution.park(parked)).subscribeOn(js);
    }

    private Mono<Step> run(Execution execution, PendingCall call) {
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
        return calls.invoke(call.address(), args)
                .map(ToolEnvelopes::of)
                .onErrorResume(ToolNotFoundException.class, missing -> notFound(call))
                .flatMap(envelope -> resolve(execution, call, envelope))
                // A runtime helper's refusal is thrown into the code with Executor's own words.
                .onErrorResume(InvalidToolArgumentsException.class,
                        refused -> Mono.fromSupplier(() -> execution.reject(call, refused.getMessage())).subscribeOn(js))
                .onErrorResume(failure -> {
                    // As Executor: the code sees an opaque message; the cause, which may quote a server's stderr, is logged.
                    String id = UUID.randomUUID().toString().substring(0, 8);
                    log.warn("tool call {} of an execution failed [{}]: {}", call.address(), id, failure.toString());
                    return Mono.fromSupplier(() -> execution.reject(call, "Internal tool error [" + id + "]")).subscribeOn(js);
                });
    }

    private Mono<Step> resolve(Execution execution, PendingCall call, String envelope) {
        return Mono.fromSupplier(() -> execution.resolve(call, envelope)).subscribeOn(js);
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
        return catalogs.catalog(new ConnectionKey(Owner.parse(parts[1]).get(), parts[0], parts[2]))
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

    // ---- answers ---------------------------------------------------------------------------------

    private static String question(PendingCall call, Decision decision) {
        String ask = decision.pattern() == null ? "Approve " + call.address() + "?"
                : "Approve " + call.address() + "? (matched policy: " + decision.pattern() + ")";
        String preview = call.argsPreview().length() > MAX_ARGUMENT_PREVIEW_CHARS
                ? call.argsPreview().substring(0, MAX_ARGUMENT_PREVIEW_CHARS) + "..." : call.argsPreview();
        return ask + "\n\nArguments:\n" + preview;
    }

    private ExecutionAnswer pause(Execution execution, PendingCall call) {
        String id = paused.nextId();
        String instructions = "Ask the user for values matching requestedSchema. Then call the resume tool with executionId \""
                + id + "\", action \"accept\", and content matching requestedSchema. If the user declines, call resume with "
                + "action \"decline\" or \"cancel\".";
        String text = String.join("\n",
                "Execution paused: " + call.approval(),
                "\nAsk the user for a response matching the requested schema, then call the resume tool.",
                "\nRequested schema:\n{\n  \"type\": \"object\",\n  \"properties\": {}\n}",
                "\nexecutionId: " + id,
                "\ninstructions: " + instructions);
        String structured = "{\"status\":\"waiting_for_interaction\",\"executionId\":" + JsJson.quote(id)
                + ",\"interaction\":{\"kind\":\"form\",\"message\":" + JsJson.quote(call.approval())
                + ",\"instructions\":" + JsJson.quote(instructions)
                + ",\"address\":" + JsJson.quote(call.address())
                + (call.argsJson() == null ? "" : ",\"args\":" + call.argsJson())
                + ",\"requestedSchema\":" + REQUESTED_SCHEMA + "}}";
        paused.put(new PausedExecutions.Pause(id, execution, call, new ExecutionAnswer.Pause(text, structured)));
        execution.pausedFor(true);
        return ExecutionAnswer.paused(text, structured);
    }

    /** Executor's {@code formatExecuteResult}, over what the sandbox's {@code JSON.stringify} wrote. */
    private ExecutionAnswer completed(Execution execution, Settled settled) {
        execution.pausedFor(false);
        List<String> logs = execution.logs();
        String logPart = logs.isEmpty() ? "" : "\n\nLogs:\n" + String.join("\n", logs);
        if (!settled.ok()) {
            return ExecutionAnswer.completed(truncate("Error: " + settled.error() + logPart),
                    "{\"status\":\"error\",\"error\":" + JsJson.quote(settled.error()) + ",\"logs\":" + JsJson.array(logs) + "}", true);
        }
        String structured = "{\"status\":\"completed\",\"result\":" + settled.resultJson() + ",\"logs\":" + JsJson.array(logs) + "}";
        long limit = properties.maxOutput().toBytes();
        if (settled.resultJson().getBytes(StandardCharsets.UTF_8).length > limit) {
            return completed(execution, new Settled(false, null, null,
                    "Error: the result is larger than the output limit of " + limit + " bytes"));
        }
        String result = settled.resultText() == null || settled.resultText().isEmpty() ? "(no result)" : truncate(settled.resultText());
        return ExecutionAnswer.completed(result + logPart, structured, false);
    }

    private static String truncate(String text) {
        return text.length() > MAX_TEXT_CHARS
                ? text.substring(0, MAX_TEXT_CHARS) + "\n... [truncated " + (text.length() - MAX_TEXT_CHARS) + " chars]" : text;
    }

    @Override
    public void destroy() {
        paused.closeAll();
    }
}
