package dev.tether.execution;

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
import dev.tether.calls.ToolNotFoundException;
import dev.tether.calls.builtin.InvalidToolArgumentsException;
import dev.tether.execution.Execution.Settled;
import dev.tether.execution.Execution.Step;
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
        return Mono.fromCallable(() -> paused.take(executionId)).flatMap(pause -> {
            Execution execution = pause.execution();
            PendingCall call = pause.call();
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

    /** The drive owns the execution: it is closed on every exit except a pause, which {@link #paused} then owns. */
    private Mono<ExecutionAnswer> own(Execution execution, Supplier<Step> first) {
        return Mono.usingWhen(Mono.just(execution), owned -> drive(owned, first),
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

    private Mono<ExecutionAnswer> drive(Execution execution, Supplier<Step> first) {
        return Mono.defer(() -> {
            Sinks.Many<PendingCall> started = Sinks.many().unicast().onBackpressureBuffer();
            execution.attach(started);
            return Flux.merge(enter(execution, first), started.asFlux().flatMap(call -> handle(execution, call)))
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
                        return step(execution, () -> execution.park(call.asking(ExecutionAnswers.question(call, decision))));
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
        return calls.invoke(call.address(), args)
                .map(ToolEnvelopes::of)
                .onErrorResume(ToolNotFoundException.class, missing -> notFound(call))
                .flatMap(envelope -> resolve(execution, call, envelope))
                // A runtime helper's refusal is thrown into the code with Executor's own words.
                .onErrorResume(InvalidToolArgumentsException.class,
                        refused -> step(execution, () -> execution.reject(call, refused.getMessage())))
                .onErrorResume(failure -> {
                    // As Executor: the code sees an opaque message; the cause, which may quote a server's stderr, is logged.
                    String id = UUID.randomUUID().toString().substring(0, 8);
                    log.warn("tool call {} of an execution failed [{}]: {}", call.address(), id, failure.toString());
                    return step(execution, () -> execution.reject(call, "Internal tool error [" + id + "]"));
                });
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
        String id = paused.nextId();
        ExecutionAnswer.Pause view = ExecutionAnswers.pause(id, call);
        paused.put(new PausedExecutions.Pause(id, execution, call, view));
        execution.pausedFor(true);
        return ExecutionAnswer.paused(view.text(), view.structured());
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
