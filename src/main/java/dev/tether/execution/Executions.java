package dev.tether.execution;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.spec.McpSchema.ElicitFormRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import io.modelcontextprotocol.spec.McpSchema.ElicitUrlRequest;
import org.jspecify.annotations.Nullable;
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
import dev.tether.calls.ToolNotFoundException;
import dev.tether.calls.builtin.InvalidToolArgumentsException;
import dev.tether.execution.Execution.Settled;
import dev.tether.execution.Execution.Step;
import dev.tether.mcp.ElicitationHandler;
import dev.tether.policy.Decision;
import dev.tether.policy.Policies;
import dev.tether.store.CatalogStore;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;
import dev.tether.store.StoredTool;

/**
 * Runs code sent to {@code POST /api/executions} in a sandboxed GraalJS context, with {@code tools.…(args)} calls
 * going through {@link ToolCalls} like every other call. Code runs on the {@link ExecutionPool}, once admitted there,
 * and under the {@link MemoryWatch}. A drive of an execution (the first run, each resume) owns the tool calls it
 * starts: cancelling it (the client left) stops the code at once and cancels them, and the servers get
 * {@code notifications/cancelled}. A call that needs approval pauses the execution once nothing else is in
 * flight; the paused execution waits in {@link PausedExecutions} holding no thread and no place in the pool.
 * What the answers look like is {@link ExecutionAnswers}'.
 */
@Component
public final class Executions implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(Executions.class);
    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();
    private static final JsonSchemaValidator SCHEMAS = McpJsonDefaults.getSchemaValidator();
    private static final TypeRef<Object> ANY = new TypeRef<>() {
    };
    private static final int SUGGESTIONS = 5;

    private final JsEngine engine;
    private final ToolCalls calls;
    private final CatalogStore catalogs;
    private final Policies policies;
    private final ExecutionProperties properties;
    private final ExecutionPool pool;
    private final MemoryWatch memory;
    private final ExecutionAnswers answers;
    private final PausedExecutions paused;

    @Autowired
    Executions(JsEngine engine, ToolCalls calls, CatalogStore catalogs, Policies policies, ExecutionProperties properties,
            ExecutionPool pool, MemoryWatch memory) {
        this(engine, calls, catalogs, policies, properties, pool, memory, Schedulers.parallel());
    }

    Executions(JsEngine engine, ToolCalls calls, CatalogStore catalogs, Policies policies, ExecutionProperties properties,
            ExecutionPool pool, MemoryWatch memory, Scheduler timer) {
        this.engine = engine;
        this.calls = calls;
        this.catalogs = catalogs;
        this.policies = policies;
        this.properties = properties;
        this.pool = pool;
        this.memory = memory;
        this.answers = new ExecutionAnswers(properties.maxOutput().toBytes());
        this.paused = new PausedExecutions(properties.maxPaused(), properties.pausedExpiry(), timer);
    }

    /** Runs {@code code} until it completes or pauses for an approval. Cancelling ends it and its tool calls. */
    public Mono<ExecutionAnswer> execute(String code) {
        return pool.admit(Mono.defer(() -> {
            Execution execution = new Execution(properties, pool.lane());
            // Opening (the engine too, on the first execution) is not the code's time: it runs before the drive.
            return Mono.usingWhen(Mono.fromRunnable(() -> memory.watch(execution)).thenReturn(execution),
                    opened -> Mono.fromSupplier(() -> opened.open(engine)).subscribeOn(opened.lane())
                            .then(own(opened, () -> opened.start(code)))
                            .onErrorResume(JsUnavailableException.class, unavailable -> Mono.just(
                                    completed(opened, ExecutionAnswers.failed("Error: " + unavailable.getMessage())))),
                    opened -> Mono.empty(), (opened, error) -> close(opened), this::close);
        })).onErrorResume(ExecutionRefusedException.class,
                refused -> Mono.just(answers.completed(List.of(), ExecutionAnswers.failed("Error: " + refused.getMessage()))));
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
        return resume(executionId, action, null);
    }

    /**
     * Answers what a paused execution waits for. An approval: as {@link #resume(String, ResumeAction)}. A server's
     * question: the action, and for an accepted form the {@code content}, go to the server, whose call goes on; content
     * that does not match the requested schema fails with {@link ResumeContentException} and the execution stays paused.
     */
    public Mono<ExecutionAnswer> resume(String executionId, ResumeAction action, @Nullable Map<String, Object> content) {
        // The schema validator loads what it needs on first use: off the event loop.
        return Mono.fromCallable(() -> paused.take(executionId, pause -> check(pause.call(), action, content)))
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap(pause -> {
            Execution execution = pause.execution();
            PendingCall call = pause.call();
            Elicitation question = call.elicitation();
            if (question != null) {
                ElicitResult answer = new ElicitResult(switch (action) {
                    case ACCEPT -> ElicitResult.Action.ACCEPT;
                    case DECLINE -> ElicitResult.Action.DECLINE;
                    case CANCEL -> ElicitResult.Action.CANCEL;
                }, action == ResumeAction.ACCEPT && !question.url() ? content : null);
                return pool.admit(own(execution, () -> execution.answered(call, () -> question.answer().tryEmitValue(answer)),
                                question.outcome()))
                        .onErrorResume(ExecutionRefusedException.class, refused -> close(execution).thenReturn(
                                completed(execution, ExecutionAnswers.failed("Error: " + refused.getMessage()))));
            }
            execution.unpark(call);
            return pool.admit(own(execution, () -> action == ResumeAction.ACCEPT
                    ? execution.dispatch(call.approve())
                    : execution.reject(call, "Tool \"" + call.path() + "\" requires approval but the request was "
                            + (action == ResumeAction.CANCEL ? "cancelled" : "declined") + " by the user.")))
                    .onErrorResume(ExecutionRefusedException.class, refused -> close(execution).thenReturn(
                            completed(execution, ExecutionAnswers.failed("Error: " + refused.getMessage()))));
        });
    }

    /**
     * Ends a paused execution that nobody will resume (the agent that paused it left): closed as an expired one is,
     * a server's question it waited on answered {@code cancel}. Nothing when no execution with this id is paused.
     */
    public Mono<Void> abandon(String executionId) {
        return Mono.fromCallable(() -> paused.take(executionId))
                .flatMap(pause -> close(pause.execution()))
                .onErrorResume(ExecutionNotFoundException.class, gone -> Mono.empty());
    }

    /**
     * Completes once a task went through the executions' threads, or at once when every place is taken (the pool
     * is busy, not broken: its queue says so).
     */
    public Mono<Void> probe() {
        return pool.full() ? Mono.empty() : Mono.fromRunnable(() -> { }).subscribeOn(pool.lane()).then();
    }

    /** Executions that wait for an approval now. */
    public int pausedCount() {
        return paused.size();
    }

    /** Accepted content of a form must match its schema, as Executor's MCP client checks it. */
    private static void check(PendingCall call, ResumeAction action, @Nullable Map<String, Object> content) {
        Elicitation question = call.elicitation();
        if (question == null || action != ResumeAction.ACCEPT || !(question.request() instanceof ElicitFormRequest form)
                || form.requestedSchema() == null || form.requestedSchema().isEmpty()) {
            return;
        }
        var verdict = SCHEMAS.validate(form.requestedSchema(), content == null ? Map.of() : content);
        if (!verdict.valid()) {
            throw new ResumeContentException("`content` does not match the requested schema: " + verdict.errorMessage());
        }
    }

    private Mono<ExecutionAnswer> own(Execution execution, Supplier<Step> first) {
        return own(execution, first, Mono.empty());
    }

    /**
     * The drive owns the execution: it is closed on every exit except a pause, which {@link #paused} then owns.
     * {@code pending} is the answer of a call that was already running, which the drive hands to the code.
     */
    private Mono<ExecutionAnswer> own(Execution execution, Supplier<Step> first, Mono<Step> pending) {
        return Mono.usingWhen(Mono.just(execution), owned -> drive(owned, first, pending),
                owned -> owned.pausedFor() ? Mono.empty() : close(owned),
                (owned, error) -> close(owned),
                this::close);
    }

    private Mono<Void> close(Execution execution) {
        // Closing waits for code still running on another thread to stop: never on that code's own pool.
        return Mono.<Void>fromRunnable(() -> {
            memory.forget(execution);
            execution.close();
        }).subscribeOn(pool.stops());
    }

    private Mono<ExecutionAnswer> drive(Execution execution, Supplier<Step> first, Mono<Step> pending) {
        return Mono.defer(() -> {
            Sinks.Many<PendingCall> started = Sinks.many().unicast().onBackpressureBuffer();
            execution.attach(started);
            return Flux.merge(enter(execution, first), pending.flatMap(step -> answer(execution, step)),
                            started.asFlux().flatMap(call -> handle(execution, call)))
                    .next()
                    .timeout(properties.timeout())
                    .onErrorResume(TimeoutException.class, timeout -> close(execution).thenReturn(completed(execution,
                            ExecutionAnswers.failed("Error: the execution timed out after " + properties.timeout().toMillis() + "ms"))));
        });
    }

    /** Runs one entry into the code in the execution's lane; answers when the execution completed or paused. */
    private Mono<ExecutionAnswer> enter(Execution execution, Supplier<Step> entry) {
        return step(execution, entry).flatMap(step -> answer(execution, step));
    }

    private static Mono<Step> step(Execution execution, Supplier<Step> entry) {
        return Mono.fromSupplier(entry).subscribeOn(execution.lane());
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
                    .onErrorResume(PausedExecutions.TooManyPausedException.class,
                            full -> Mono.just(completed(execution, ExecutionAnswers.failed("Error: " + full.getMessage()))));
        }
        return Mono.just(completed(execution, ExecutionAnswers.failed("Error: the code awaits a promise that nothing will settle")));
    }

    // ---- tool calls ------------------------------------------------------------------------------

    private Mono<ExecutionAnswer> handle(Execution execution, PendingCall call) {
        if (call.elicitation() != null) {
            // A running call's server asked a question: the execution may pause on it now.
            return step(execution, execution::step).flatMap(step -> answer(execution, step));
        }
        Mono<Step> step = call.approved() ? run(execution, call) : decide(execution, call);
        return step.flatMap(next -> answer(execution, next));
    }

    private Mono<Step> decide(Execution execution, PendingCall call) {
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
                        return step(execution, () -> execution.park(call.asking(ExecutionAnswers.question(call, decision, tool.approvalDescription()))));
                    }
                    return run(execution, call);
                })
                .onErrorResume(ToolNotFoundException.class, missing -> notFound(call)
                        .flatMap(envelope -> resolve(execution, call, envelope)));
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
                : step(execution, () -> execution.reject(call, result.rejection()))));
        return handedOver.get();
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
        return step(execution, () -> execution.resolve(call, envelope));
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

    private ExecutionAnswer pause(Execution execution, PendingCall call) {
        if (call.elicitation() != null) {
            return elicitationPause(execution, call, call.elicitation());
        }
        String id = paused.nextId();
        ExecutionAnswer.Pause view = ExecutionAnswers.pause(id, call);
        paused.put(new PausedExecutions.Pause(id, execution, call, view));
        execution.pausedFor(true);
        return ExecutionAnswer.paused(view.text(), view.structured());
    }

    /** Executor 1.5.9's {@code formatPausedExecution} of a server's question: a form, or a URL to open. */
    private ExecutionAnswer elicitationPause(Execution execution, PendingCall call, Elicitation question) {
        String id = paused.nextId();
        String message = question.request().message();
        Map<String, Object> schema = question.request() instanceof ElicitFormRequest form && form.requestedSchema() != null
                ? form.requestedSchema() : null;
        String url = question.request() instanceof ElicitUrlRequest link ? link.url() : null;
        boolean hasSchema = schema != null && !schema.isEmpty();
        String instructions = url != null
                ? "The user needs to open this URL in a browser and complete the flow. After the user finishes, call the resume tool with executionId \""
                        + id + "\" and action \"accept\"."
                : hasSchema
                        ? "Ask the user for values matching requestedSchema. Then call the resume tool with executionId \"" + id
                                + "\", action \"accept\", and content matching requestedSchema. If the user declines, call resume with "
                                + "action \"decline\" or \"cancel\"."
                        : "This is a model-side confirmation gate; there is no browser form to open. Ask the user whether to approve "
                                + "the paused tool call. If the user approves, call the resume tool with executionId \"" + id
                                + "\" and action \"accept\". If the user declines, call resume with action \"decline\" or \"cancel\".";
        List<String> lines = new ArrayList<>();
        lines.add("Execution paused: " + message);
        if (url != null) {
            lines.add("\nOpen this URL in a browser:\n" + url);
            lines.add("\nAfter the browser flow, call the resume tool with action \"accept\".");
        }
        else if (hasSchema) {
            lines.add("\nAsk the user for a response matching the requested schema, then call the resume tool.");
            lines.add("\nRequested schema:\n" + JsJson.write(schema, "  ", ""));
        }
        else {
            lines.add("\nThis is a model-side confirmation gate; no browser form is waiting. Ask the user whether to approve, "
                    + "then call the resume tool with action \"accept\", \"decline\", or \"cancel\".");
        }
        lines.add("\nexecutionId: " + id);
        lines.add("\ninstructions: " + instructions);
        String text = String.join("\n", lines);
        String structured = "{\"status\":\"waiting_for_interaction\",\"executionId\":" + JsJson.quote(id)
                + ",\"interaction\":{\"kind\":" + (url != null ? "\"url\"" : "\"form\"")
                + ",\"message\":" + JsJson.quote(message)
                + ",\"instructions\":" + JsJson.quote(instructions)
                + ",\"address\":" + JsJson.quote(call.address())
                + (call.argsJson() == null ? "" : ",\"args\":" + call.argsJson())
                + (url != null ? ",\"url\":" + JsJson.quote(url) : "")
                + (url == null ? ",\"requestedSchema\":" + JsJson.write(schema == null ? Map.of() : schema, "", "") : "")
                + "}}";
        paused.put(new PausedExecutions.Pause(id, execution, call, new ExecutionAnswer.Pause(text, structured)));
        execution.pausedFor(true);
        return ExecutionAnswer.paused(text, structured);
    }

    private ExecutionAnswer completed(Execution execution, Settled settled) {
        execution.pausedFor(false);
        return answers.completed(execution.logs(), settled);
    }

    @Override
    public void destroy() {
        paused.closeAll();
    }
}
