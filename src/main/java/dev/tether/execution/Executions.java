package dev.tether.execution;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.spec.McpSchema.ElicitFormRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.tether.calls.ToolCalls;
import dev.tether.execution.Execution.Step;
import dev.tether.identity.Audit;
import dev.tether.identity.AuditEvent;
import dev.tether.identity.NotPermittedException;
import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.policy.Policies;
import dev.tether.replicas.ReplicaIds;
import dev.tether.store.CatalogStore;

/**
 * Runs code sent to {@code POST /api/executions} in a sandboxed GraalJS context, with {@code tools.…(args)} calls
 * going through {@link ToolCalls} like every other call. Code runs on the {@link ExecutionPool}, once admitted there,
 * and under the {@link MemoryWatch}. A drive of an execution (the first run, each resume) owns the tool calls it
 * starts: cancelling it (the client left) stops the code at once and cancels them, and the servers get
 * {@code notifications/cancelled}. A call that needs approval pauses the execution once nothing else is in
 * flight; the paused execution waits in {@link PausedExecutions} holding no thread and no place in the pool.
 * How a call is decided and run is {@link CallsFromCode}'s job; what the answers look like, {@link ExecutionAnswers}'.
 */
@Component
public final class Executions implements DisposableBean {

    private static final JsonSchemaValidator SCHEMAS = McpJsonDefaults.getSchemaValidator();

    private final JsEngine engine;
    private final CallsFromCode toolCalls;
    private final ExecutionProperties properties;
    private final ExecutionPool pool;
    private final MemoryWatch memory;
    private final ExecutionAnswers answers;
    private final PausedExecutions paused;
    private final Audit audit;

    @Autowired
    Executions(JsEngine engine, ToolCalls calls, CatalogStore catalogs, Policies policies, ExecutionProperties properties,
            ExecutionPool pool, MemoryWatch memory, ReplicaIds names, Audit audit) {
        this(engine, calls, catalogs, policies, properties, pool, memory, names, Schedulers.parallel(), audit);
    }

    Executions(JsEngine engine, ToolCalls calls, CatalogStore catalogs, Policies policies, ExecutionProperties properties,
            ExecutionPool pool, MemoryWatch memory, ReplicaIds names, Scheduler timer, Audit audit) {
        this.audit = audit;
        this.engine = engine;
        this.toolCalls = new CallsFromCode(calls, catalogs, policies);
        this.properties = properties;
        this.pool = pool;
        this.memory = memory;
        this.answers = new ExecutionAnswers(properties.maxOutput().toBytes());
        this.paused = new PausedExecutions(properties.maxPaused(), properties.pausedExpiry(), timer, names);
    }

    /**
     * Runs {@code code} until it completes or pauses for an approval, as the calling principal: its tool calls use that
     * user's connections, and only that user sees and resumes it. A viewer runs no code. Cancelling ends it and its tool
     * calls.
     */
    public Mono<ExecutionAnswer> execute(String code) {
        return Principals.current().flatMap(caller -> caller.mayUse() ? run(code)
                : Mono.error(new NotPermittedException(caller, "run code")));
    }

    private Mono<ExecutionAnswer> run(String code) {
        return pool.admit(Mono.defer(() -> {
            Execution execution = new Execution(properties, pool.lane(), pool.host());
            // Opening (the engine too, on the first execution) is not the code's time: it runs before the drive, on a
            // host thread, never lowered: it takes the engine's locks, which a lowered thread would hold for seconds
            // while every other opening waits.
            return Mono.usingWhen(Mono.fromRunnable(() -> memory.watch(execution)).thenReturn(execution),
                    opened -> opened.onHost(() -> opened.open(engine))
                            .then(own(opened, () -> opened.start(code)))
                            .onErrorResume(JsUnavailableException.class, unavailable -> Mono.just(
                                    completed(opened, Settled.failed("Error: " + unavailable.getMessage())))),
                    opened -> Mono.empty(), (opened, error) -> close(opened), this::close);
        })).onErrorResume(ExecutionRefusedException.class,
                refused -> Mono.just(answers.completed(List.of(), Settled.failed("Error: " + refused.getMessage()))));
    }

    /** What a paused execution waits for; fails with {@link ExecutionNotFoundException} when none has this id. */
    public Mono<ExecutionAnswer.Pause> paused(String executionId) {
        return Principals.current().map(caller -> paused.view(executionId, caller));
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
        return Principals.current().flatMap(caller -> Mono.fromCallable(() -> paused.take(executionId, caller,
                        pause -> check(pause.call(), action, content)))
                .subscribeOn(Schedulers.boundedElastic())
                .doOnNext(pause -> audit.record(AuditEvent.of(caller, "execution.resume", executionId + " " + pause.call().path(),
                        action.name().toLowerCase(java.util.Locale.ROOT))))
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
                                completed(execution, Settled.failed("Error: " + refused.getMessage()))));
            }
            execution.unpark(call);
            return pool.admit(own(execution, () -> action == ResumeAction.ACCEPT
                    ? execution.dispatch(call.approve())
                    : execution.reject(call, "Tool \"" + call.path() + "\" requires approval but the request was "
                            + (action == ResumeAction.CANCEL ? "cancelled" : "declined") + " by the user.")))
                    .onErrorResume(ExecutionRefusedException.class, refused -> close(execution).thenReturn(
                            completed(execution, Settled.failed("Error: " + refused.getMessage()))));
        }));
    }

    /**
     * Ends a paused execution that nobody will resume (the agent that paused it left): closed as an expired one is,
     * a server's question it waited on answered {@code cancel}. Nothing when no execution with this id is paused.
     */
    public Mono<Void> abandon(String executionId) {
        return Principals.current().map(caller -> paused.take(executionId, caller))
                .flatMap(pause -> close(pause.execution()))
                .onErrorResume(ExecutionNotFoundException.class, gone -> Mono.empty());
    }

    /**
     * Completes once a task went through the executions' threads, or at once when every place is taken (the pool
     * is busy, not broken: its queue says so).
     */
    public Mono<Void> probe() {
        return pool.full() ? Mono.empty() : Mono.fromRunnable(() -> { }).subscribeOn(pool.lane()).publishOn(pool.host()).then();
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
        }).subscribeOn(pool.host());
    }

    private Mono<ExecutionAnswer> drive(Execution execution, Supplier<Step> first, Mono<Step> pending) {
        return Mono.defer(() -> {
            Sinks.Many<PendingCall> started = Sinks.many().unicast().onBackpressureBuffer();
            execution.attach(started);
            return Flux.merge(enter(execution, first), pending.flatMap(step -> answer(execution, step)),
                            // The code's thread started the call: its work runs on a host thread.
                            started.asFlux().publishOn(execution.host()).flatMap(call -> handle(execution, call)))
                    .next()
                    .timeout(properties.timeout())
                    .onErrorResume(TimeoutException.class, timeout -> close(execution).thenReturn(completed(execution,
                            Settled.failed("Error: the execution timed out after " + properties.timeout().toMillis() + "ms"))));
        });
    }

    /** Runs one entry into the code in the execution's lane; answers when the execution completed or paused. */
    private Mono<ExecutionAnswer> enter(Execution execution, Supplier<Step> entry) {
        return execution.onLane(entry).flatMap(step -> answer(execution, step));
    }

    private Mono<ExecutionAnswer> answer(Execution execution, Step step) {
        if (step.settled() != null) {
            return Mono.just(completed(execution, step.settled()));
        }
        if (!step.quiet()) {
            return Mono.empty();
        }
        if (step.parked() != null) {
            return Principals.current().map(owner -> pause(execution, step.parked(), owner))
                    .onErrorResume(PausedExecutions.TooManyPausedException.class,
                            full -> Mono.just(completed(execution, Settled.failed("Error: " + full.getMessage()))));
        }
        return Mono.just(completed(execution, Settled.failed("Error: the code awaits a promise that nothing will settle")));
    }

    // ---- tool calls ------------------------------------------------------------------------------

    private Mono<ExecutionAnswer> handle(Execution execution, PendingCall call) {
        if (call.elicitation() != null) {
            // A running call's server asked a question: the execution may pause on it now.
            return execution.onLane(execution::step).flatMap(step -> answer(execution, step));
        }
        Mono<Step> step = call.approved() ? toolCalls.run(execution, call) : toolCalls.decide(execution, call);
        return step.flatMap(next -> answer(execution, next));
    }

    // ---- answers ---------------------------------------------------------------------------------

    private ExecutionAnswer pause(Execution execution, PendingCall call, Principal owner) {
        String id = paused.nextId();
        Elicitation question = call.elicitation();
        ExecutionAnswer.Pause view = question != null ? ExecutionAnswers.pause(id, call, question) : ExecutionAnswers.pause(id, call);
        paused.put(new PausedExecutions.Pause(id, execution, call, view, owner));
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
