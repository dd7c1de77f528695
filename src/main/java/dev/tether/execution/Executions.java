package dev.tether.execution;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.spec.McpSchema.ElicitFormRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
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
import dev.tether.store.ExecutionJournals;

/**
 * Runs code sent to {@code POST /api/executions} in a sandboxed GraalJS context, with {@code tools.…(args)} calls
 * going through {@link ToolCalls} like every other call. Code runs on the {@link ExecutionPool}, once admitted there,
 * and under the {@link MemoryWatch}. A drive of an execution (the first run, each resume) owns the tool calls it
 * starts: cancelling it (the client left) stops the code at once and cancels them, and the servers get
 * {@code notifications/cancelled}. A call that needs approval pauses the execution once nothing else is in
 * flight; the paused execution waits in {@link PausedExecutions} holding no thread and no place in the pool, and its
 * {@link Journal} waits in the store ({@link DurableJournals}), so that any replica can resume it after this one is gone.
 * How a call is decided and run is {@link CallsFromCode}'s job; what the answers look like, {@link ExecutionAnswers}'.
 *
 * <p>This is the one door to a paused execution, for every entry point (the REST resume, the agent endpoint's
 * {@code resume} tool, a retry of MCP 2026-07-28's multi round-trip request that names it in its {@code requestState}):
 * {@link #resume} resumes it wherever it lives, from its live context when this replica holds it, else rebuilt here by
 * replaying its journal ({@link JournalReplay}). Either way only after a compare-and-set on its row, so that one replica
 * runs the answer.
 *
 * <p>An execution is its caller's ({@link Principals}): its tool calls use that user's connections, and only that user
 * sees and resumes its pauses, held here ({@link PausedExecutions}) or stored ({@link ExecutionJournals}, whose row keeps
 * the user), so that a replay on another replica is the same user's too.
 */
@Component
public final class Executions implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(Executions.class);
    private static final JsonSchemaValidator SCHEMAS = McpJsonDefaults.getSchemaValidator();

    private final JsEngine engine;
    private final CallsFromCode toolCalls;
    private final ExecutionProperties properties;
    private final ExecutionPool pool;
    private final MemoryWatch memory;
    private final ExecutionAnswers answers;
    private final PausedExecutions paused;
    private final DurableJournals journals;
    private final JournalReplay replay;
    private final Audit audit;

    Executions(JsEngine engine, ToolCalls calls, CatalogStore catalogs, Policies policies, ExecutionProperties properties,
            ExecutionPool pool, MemoryWatch memory, ReplicaIds names, ExecutionJournals journals, MeterRegistry registry, Audit audit) {
        this.audit = audit;
        this.engine = engine;
        this.toolCalls = new CallsFromCode(calls, catalogs, policies);
        this.properties = properties;
        this.pool = pool;
        this.memory = memory;
        this.answers = new ExecutionAnswers(properties.maxOutput().toBytes());
        this.paused = new PausedExecutions(properties.maxPaused(), properties.pausedExpiry(), Schedulers.parallel(), names,
                this::expired);
        this.journals = new DurableJournals(journals, properties, names);
        this.replay = new JournalReplay(engine, properties, registry);
        Gauge.builder("tether.executions.paused", paused, PausedExecutions::size)
                .description("executions this replica holds paused in memory, waiting for an approval or an answer")
                .register(registry);
    }

    /**
     * Runs {@code code} until it completes or pauses for an approval, as the calling principal: its tool calls use that
     * user's connections, and only that user sees and resumes it. A viewer runs no code. Cancelling ends it and its tool
     * calls.
     */
    public Mono<ExecutionAnswer> execute(String code) {
        return execute(code, null);
    }

    /** As {@link #execute(String)}, for {@code origin} (the agent session that sent it), which its journal keeps. */
    public Mono<ExecutionAnswer> execute(String code, @Nullable String origin) {
        return Principals.current().flatMap(caller -> caller.mayUse() ? run(code, origin)
                : Mono.error(new NotPermittedException(caller, "run code")));
    }

    private Mono<ExecutionAnswer> run(String code, @Nullable String origin) {
        return pool.admit(Mono.defer(() -> {
            Execution execution = new Execution(properties, pool.lane(), pool.host(),
                    Journal.of(code, origin, properties.durable(), properties.maxJournal().toBytes()));
            // Opening (the engine too, on the first execution) is not the code's time: it runs before the drive, on a
            // host thread, never lowered: it takes the engine's locks, which a lowered thread would hold for seconds
            // while every other opening waits.
            return Mono.usingWhen(watched(execution),
                    opened -> opened.onHost(() -> opened.open(engine))
                            .then(own(opened, () -> opened.start(code)))
                            .onErrorResume(JsUnavailableException.class, unavailable -> end(opened).thenReturn(
                                    completed(opened, Settled.failed("Error: " + unavailable.getMessage())))),
                    opened -> Mono.empty(), (opened, error) -> end(opened), this::end);
        })).onErrorResume(ExecutionRefusedException.class,
                refused -> Mono.just(answers.completed(List.of(), Settled.failed("Error: " + refused.getMessage()))));
    }

    /**
     * What a paused execution waits for: from its live context when this replica holds it, else from its journal's row
     * (any replica). Fails with {@link ExecutionNotFoundException} when none of the caller's waits under this id.
     */
    public Mono<ExecutionAnswer.Pause> paused(String executionId) {
        return Principals.current().flatMap(caller -> Mono.fromCallable(() -> Optional.ofNullable(paused.find(executionId, caller)))
                .flatMap(held -> held.isPresent() ? Mono.just(held.get().view())
                        : journals.stored(executionId, caller).map(DurableJournals::view)));
    }

    /** Whether this replica holds the paused execution {@code executionId} in memory, where its session resumes it. */
    public boolean heldHere(String executionId) {
        return paused.holds(executionId);
    }

    /**
     * Answers the approval a paused execution waits for: accept runs the call, decline and cancel make it fail
     * in the code (as in Executor, the code may catch that). Runs on until the code completes or pauses again.
     */
    public Mono<ExecutionAnswer> resume(String executionId, ResumeAction action) {
        return resume(executionId, action, null);
    }

    /**
     * Resumes the paused execution {@code executionId} with this answer, wherever it lives: its live context when this
     * replica holds it, otherwise rebuilt here from its journal (the calls it made answered from the journal, never sent
     * again). An approval: accept runs the call, decline and cancel make it fail in the code. A server's question: the
     * action, and for an accepted form the {@code content}, go to the server, whose call goes on; content that does not
     * match the requested schema fails with {@link ResumeContentException} and the execution stays paused. Runs on until
     * the code completes or pauses again (under a new id). Fails with {@link ExecutionNotFoundException} when nothing
     * of the caller's waits under this id (never was, ended, expired, resumed already, here or on another replica, or
     * another user's).
     */
    public Mono<ExecutionAnswer> resume(String executionId, ResumeAction action, @Nullable Map<String, Object> content) {
        // The schema validator loads what it needs on first use: off the event loop.
        return Principals.current().flatMap(caller -> Mono.fromCallable(() -> Optional.ofNullable(paused.takeHeld(executionId, caller,
                        pause -> check(pause.call(), action, content))))
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap(held -> held.isPresent() ? resumeHeld(held.get(), caller, action, content)
                        : rebuild(executionId, caller, action, content)));
    }

    /** The resume goes to the audit trail: who answered which pause, on which call, how. */
    private void audited(Principal caller, String executionId, PendingCall call, ResumeAction action) {
        audit.record(AuditEvent.of(caller, "execution.resume", executionId + " " + call.path(), action.name().toLowerCase(Locale.ROOT)));
    }

    /** The fast path: the live context this replica holds, once its row is claimed. */
    private Mono<ExecutionAnswer> resumeHeld(PausedExecutions.Pause pause, Principal caller, ResumeAction action,
            @Nullable Map<String, Object> content) {
        audited(caller, pause.id(), pause.call(), action);
        Execution execution = pause.execution();
        return journals.claim(pause.id(), execution.journal())
                .onErrorResume(failed -> close(execution).then(Mono.error(failed)))
                .then(pool.admit(answer(execution, pause.call(), action, content))
                        .onErrorResume(ExecutionRefusedException.class, refused -> end(execution).thenReturn(
                                completed(execution, Settled.failed("Error: " + refused.getMessage())))));
    }

    /**
     * The execution is not held here: rebuilt from its journal by replay, once admitted and claimed, then resumed. A
     * journal that diverges from its code, or whose pause cannot go on, ends the execution with the reason.
     */
    private Mono<ExecutionAnswer> rebuild(String executionId, Principal caller, ResumeAction action, @Nullable Map<String, Object> content) {
        return journals.stored(executionId, caller)
                .flatMap(journals::load)
                .flatMap(journal -> pool.admit(Mono.defer(() -> {
                    Execution execution = new Execution(properties, pool.lane(), pool.host(), journal);
                    return journals.claim(executionId, journal).then(Mono.usingWhen(watched(execution),
                            opened -> replay.rebuild(opened, executionId)
                                    .flatMap(call -> {
                                        audited(caller, executionId, call, action);
                                        return answer(opened, call, action, content);
                                    })
                                    .onErrorResume(JournalReplay.ReplayFailedException.class, failed -> end(opened).thenReturn(
                                            completed(opened, Settled.failed("Error: " + failed.getMessage()))))
                                    .onErrorResume(JsUnavailableException.class, unavailable -> end(opened).thenReturn(
                                            completed(opened, Settled.failed("Error: " + unavailable.getMessage())))),
                            opened -> Mono.empty(), (opened, error) -> end(opened), this::end));
                })))
                .onErrorResume(ExecutionRefusedException.class,
                        refused -> Mono.just(answers.completed(List.of(), Settled.failed("Error: " + refused.getMessage()))));
    }

    /** Hands the user's answer to the call the execution paused on, and runs on. */
    private Mono<ExecutionAnswer> answer(Execution execution, PendingCall call, ResumeAction action, @Nullable Map<String, Object> content) {
        return Mono.defer(() -> {
            Elicitation question = call.elicitation();
            if (question != null) {
                Map<String, Object> given = action == ResumeAction.ACCEPT && !question.url() ? content : null;
                execution.journal().answered(call.ordinal(), action, given);
                ElicitResult answer = new ElicitResult(switch (action) {
                    case ACCEPT -> ElicitResult.Action.ACCEPT;
                    case DECLINE -> ElicitResult.Action.DECLINE;
                    case CANCEL -> ElicitResult.Action.CANCEL;
                }, given);
                return own(execution, () -> execution.answered(call, () -> question.answer().tryEmitValue(answer)), question.outcome());
            }
            execution.journal().decided(call.ordinal(), action);
            execution.unpark(call);
            return own(execution, () -> action == ResumeAction.ACCEPT
                    ? execution.dispatch(call.approve())
                    : execution.reject(call, "Tool \"" + call.path() + "\" requires approval but the request was "
                            + (action == ResumeAction.CANCEL ? "cancelled" : "declined") + " by the user."));
        });
    }

    /**
     * Ends a paused execution that nobody will resume (the agent that paused it left): closed as an expired one is,
     * a server's question it waited on answered {@code cancel}, its journal removed. Nothing when none waits under this id.
     */
    public Mono<Void> abandon(String executionId) {
        return Principals.current().flatMap(caller -> Mono.fromCallable(() -> Optional.ofNullable(paused.takeHeld(executionId, caller, pause -> { })))
                .flatMap(held -> held.isPresent() ? end(held.get().execution())
                        : journals.stored(executionId, caller).flatMap(journals::remove)))
                .onErrorResume(ExecutionNotFoundException.class, gone -> Mono.empty());
    }

    /**
     * Completes once a task went through the executions' threads, or at once when every place is taken (the pool
     * is busy, not broken: its queue says so).
     */
    public Mono<Void> probe() {
        return pool.full() ? Mono.empty() : Mono.fromRunnable(() -> { }).subscribeOn(pool.lane()).publishOn(pool.host()).then();
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
     * The drive owns the execution: it ends on every exit except a pause, which {@link #paused} then owns.
     * {@code pending} is the answer of a call that was already running, which the drive hands to the code.
     */
    private Mono<ExecutionAnswer> own(Execution execution, Supplier<Step> first, Mono<Step> pending) {
        return Mono.usingWhen(Mono.just(execution), owned -> drive(owned, first, pending),
                owned -> owned.pausedFor() ? Mono.empty() : end(owned),
                (owned, error) -> end(owned),
                this::end);
    }

    private Mono<Execution> watched(Execution execution) {
        return Mono.fromRunnable(() -> memory.watch(execution)).thenReturn(execution);
    }

    /** Closes the context; its journal stays (the daemon stops, or another replica resumed it). */
    private Mono<Void> close(Execution execution) {
        // Closing waits for code still running on another thread to stop: never on that code's own pool.
        return Mono.<Void>fromRunnable(() -> {
            memory.forget(execution);
            execution.close();
        }).subscribeOn(pool.host());
    }

    /** The execution is over: its context closed and its journal removed from the store. */
    private Mono<Void> end(Execution execution) {
        return close(execution).then(journals.ended(execution.journal()));
    }

    private void expired(PausedExecutions.Pause pause) {
        end(pause.execution()).subscribe(done -> { }, failed -> log.warn("ending expired execution {} failed: {}", pause.id(), failed.toString()));
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
            return pause(execution, step.parked())
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

    // ---- pauses and their journals ------------------------------------------------------------------

    /**
     * Pauses on {@code call}, as the caller's (the user the execution runs for): its journal written to the store first,
     * so that the id it answers survives this replica.
     */
    private Mono<ExecutionAnswer> pause(Execution execution, PendingCall call) {
        return Principals.current().flatMap(owner -> {
            String id = paused.nextId();
            Elicitation question = call.elicitation();
            ExecutionAnswer.Pause view = question != null ? ExecutionAnswers.pause(id, call, question) : ExecutionAnswers.pause(id, call);
            execution.journal().paused(call.ordinal(), id);
            return journals.write(execution.journal(), id, view, owner).then(Mono.fromCallable(() -> {
                paused.put(new PausedExecutions.Pause(id, execution, call, view, owner));
                execution.pausedFor(true);
                return ExecutionAnswer.paused(view.text(), view.structured());
            }));
        });
    }

    private ExecutionAnswer completed(Execution execution, Settled settled) {
        execution.pausedFor(false);
        return answers.completed(execution.logs(), settled);
    }

    @Override
    public void destroy() {
        journals.dispose();
        paused.closeAll();
    }
}
