package dev.tether.execution;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

import org.graalvm.polyglot.Context;
import org.graalvm.polyglot.PolyglotException;
import org.graalvm.polyglot.Source;
import org.graalvm.polyglot.Value;
import org.graalvm.polyglot.proxy.ProxyExecutable;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

import dev.tether.calls.ToolAddress;
/**
 * One run of code in its own context. A GraalJS context is single-threaded, so every entry (the first
 * evaluation, each tool answer handed back) holds {@link #lock}; between entries the code only awaits promises
 * and no thread is held. After each entry the execution says where it stands ({@link Step}).
 */
final class Execution {

    /** Where an execution stands after an entry. */
    record Step(@Nullable Settled settled, int inFlight, @Nullable PendingCall parked) {

        boolean quiet() {
            return settled == null && inFlight == 0;
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final ConsoleOutput console;
    private final Deque<PendingCall> parked = new ArrayDeque<>();
    private final long maxOutputBytes;
    private final int maxPendingCalls;
    private final int maxParkedCalls;
    private final Allocations allocations = new Allocations();
    private final Scheduler lane;
    private final Scheduler host;
    private final Journal journal;
    /** While the code is replayed: the calls it made that the journal has not answered yet, by ordinal. */
    private final Map<Integer, PendingCall> replayed = new HashMap<>();
    /** Why the replayed code does not match its journal; null while it does. */
    private volatile @Nullable String diverged;
    /** Calls refused for {@link #maxPendingCalls} since the code last started one or saw one end. */
    private int refusedInARow;
    private int inFlight;
    /** How the code ended; null while it runs. */
    private @Nullable Settled settled;
    /** Null until {@link #attach}. */
    private Sinks.@Nullable Many<PendingCall> calls;
    /** Null until {@link #open}, and again once closed. */
    private volatile @Nullable Context context;
    /** Null until {@link #open}. */
    private @Nullable Value run;
    private volatile boolean closed;
    private volatile String closedWhy = "the execution was closed";
    private volatile boolean pausedFor;
    private final Sinks.One<Boolean> closing = Sinks.one();

    /**
     * {@code lane}: where every entry into the code runs, one at a time ({@link ExecutionPool#lane()}); {@code host}:
     * where what follows an entry runs, and where the execution stops itself when its code will not
     * ({@link ExecutionPool#host()}).
     */
    Execution(ExecutionProperties properties, Scheduler lane, Scheduler host) {
        this(properties, lane, host, Journal.none(""));
    }

    /** As {@link #Execution(ExecutionProperties, Scheduler, Scheduler)}, recording what it meets in {@code journal}. */
    Execution(ExecutionProperties properties, Scheduler lane, Scheduler host, Journal journal) {
        this.lane = lane;
        this.host = host;
        this.journal = journal;
        this.maxOutputBytes = properties.maxOutput().toBytes();
        this.console = new ConsoleOutput(maxOutputBytes);
        this.maxPendingCalls = properties.maxPendingCalls();
        this.maxParkedCalls = properties.maxParkedCalls();
    }

    /** Routes the calls the code makes from now on to {@code calls}: one sink per drive of the execution. */
    void attach(Sinks.Many<PendingCall> calls) {
        locked(() -> this.calls = calls);
    }

    /** Creates the context and installs the prelude: Tether's own set-up, outside the code's time limit. */
    Step open(JsEngine engine) {
        return enter(() -> {
            context = engine.newContext();
            if (closed) {
                close(); // closed while the context was being made: it must not outlive the execution
                return;
            }
            run = context.eval(engine.prelude())
                    .execute((ProxyExecutable) this::invoke, (ProxyExecutable) this::log, (ProxyExecutable) this::settle,
                            journal.records() ? (ProxyExecutable) this::clock : null,
                            journal.records() ? (ProxyExecutable) this::random : null);
        });
    }

    /** Starts the code; it runs until it first awaits. */
    Step start(String code) {
        return enter(() -> {
            Value body;
            try {
                // The code is the body of an async function, as in Executor; line 1 of the code is line 2 here.
                // Each code is new: not worth a place in the engine's shared source cache.
                body = Objects.requireNonNull(context, "opened")
                        .eval(Source.newBuilder("js", "'use strict'; (async () => {\n" + code + "\n})", "execution.js")
                                .cached(false).buildLiteral());
            }
            catch (PolyglotException ex) {
                if (!ex.isSyntaxError()) {
                    throw ex;
                }
                settled = Settled.syntaxError(ex);
                return;
            }
            Objects.requireNonNull(run, "opened").execute(body);
        });
    }

    /** Hands a tool's answer (JSON) back to the code awaiting it. */
    Step resolve(PendingCall call, String json) {
        return enter(() -> {
            landed(call);
            journal.resolved(call.ordinal(), json);
            call.resolve().execute(json);
        });
    }

    /** Makes the call fail in the code with {@code message}. */
    Step reject(PendingCall call, String message) {
        return enter(() -> {
            landed(call);
            journal.rejected(call.ordinal(), message);
            call.reject().execute(message);
        });
    }

    /** A call ended: out of flight, or out of the parked ones if it ended while its server's question waited. */
    private void landed(PendingCall call) {
        refusedInARow = 0;
        if (!parked.removeIf(call::same)) {
            inFlight--;
        }
    }

    /**
     * A running call waits on its server's question: it leaves the calls in flight until the user answers, so the
     * execution can pause once nothing else runs. Tells the current drive, if any, to look again.
     */
    void ask(PendingCall asking) {
        locked(() -> {
            if (closed) {
                return;
            }
            inFlight--;
            parked.add(asking);
            journal.asked(asking.ordinal(), question(asking));
            Objects.requireNonNull(calls, "attached").tryEmitNext(asking);
        });
    }

    /** The user answered the question of {@code asking}, which runs again; {@code answer} tells its server. */
    Step answered(PendingCall asking, Runnable answer) {
        return enter(() -> {
            if (parked.remove(asking)) {
                inFlight++;
            }
            answer.run();
        });
    }

    /** Where the execution stands now. */
    Step step() {
        return enter(() -> {
        });
    }

    /** Emits when the execution is closed: what it still runs stops then. */
    Mono<Boolean> closing() {
        return closing.asMono();
    }

    /** Takes a call out of flight until the user answers it; refuses it in the code when too many wait already. */
    Step park(PendingCall call) {
        return enter(() -> {
            inFlight--;
            if (parked.size() >= maxParkedCalls) {
                String refusal = "too many tool calls of this execution wait for approval: the limit is " + maxParkedCalls
                        + " (tether.execution.max-parked-calls); await an approved call before starting another";
                journal.rejected(call.ordinal(), refusal);
                call.reject().execute(refusal);
                return;
            }
            parked.add(call);
            journal.parked(call.ordinal(), String.valueOf(call.approval()));
        });
    }

    /** Takes back the parked call the user now answers. */
    void unpark(PendingCall call) {
        locked(() -> parked.remove(call));
    }

    /** Puts an accepted call back in flight. */
    Step dispatch(PendingCall call) {
        return enter(() -> {
            inFlight++;
            Objects.requireNonNull(calls, "attached").tryEmitNext(call);
        });
    }

    // ---- replay ------------------------------------------------------------------------------------------

    Journal journal() {
        return journal;
    }

    /** Why the replayed code left its journal; null while it follows it. */
    @Nullable String diverged() {
        return diverged;
    }

    /** Hands a recorded answer back into the replayed code, as {@link #resolve} or {@link #reject} did live. */
    Step redeliver(Journal.Entry answer) {
        return enter(() -> {
            PendingCall call = replayed.remove(answer.call());
            if (call == null) {
                diverged = "its journal answers call #" + (answer.call() + 1) + ", which the code did not make by then";
                return;
            }
            landed(call);
            (answer.kind() == Journal.Kind.RESOLVED ? call.resolve() : call.reject()).execute(answer.text());
        });
    }

    /**
     * The recorded answers are spent: the calls the code made and the journal did not answer must be the ones open where
     * it paused. They are parked as they were, and the execution stands where it paused, recording from now on. A call
     * that was asking its server's question cannot go on (its server's call ended with the context that made it).
     */
    Step replayed() {
        return enter(() -> {
            for (Journal.Open open : journal.open()) {
                PendingCall call = replayed.remove(open.call());
                if (call == null) {
                    diverged = "call #" + (open.call() + 1) + " waited where the execution paused, and the code did not make it";
                    return;
                }
                if (open.asking()) {
                    diverged = "call #" + (open.call() + 1) + ", " + call.address() + ", was waiting for the answer to its server's "
                            + "question when the execution's context was lost, and its server's call with it; it is not sent again";
                    return;
                }
                inFlight--;
                parked.add(call.asking(open.question()));
            }
            if (!replayed.isEmpty()) {
                int first = replayed.keySet().stream().min(Integer::compare).orElseThrow();
                diverged = "the code made call #" + (first + 1) + ", " + Objects.requireNonNull(replayed.get(first)).address()
                        + ", which its journal does not have before the pause";
                return;
            }
            PendingCall head = parked.peek();
            if (head == null || head.ordinal() != journal.pausedOn()) {
                diverged = "the code did not come back to the call it paused on (#" + (journal.pausedOn() + 1) + ")";
                return;
            }
            journal.replayed();
        });
    }

    List<String> logs() {
        return console.lines();
    }

    /**
     * Ends the execution: cancels code still running (an endless loop included) and frees the context. Safe
     * from any thread, idempotent.
     */
    void close() {
        close("the execution was closed");
    }

    /** Ends the execution as {@link #close()} does; the code, should it be running, ends with {@code why}. */
    void close(String why) {
        if (!closed) {
            closedWhy = why;
        }
        closed = true;
        closing.tryEmitValue(true);
        Context open;
        synchronized (this) {
            open = context;
            context = null;
        }
        if (open != null) {
            open.close(true);
        }
        // A question still waiting gets its answer (after the context, whose code may hold the lock, is closed): a
        // server must not wait for a user nobody will ask.
        locked(() -> parked.forEach(call -> {
            if (call.elicitation() != null) {
                call.elicitation().answer().tryEmitValue(new ElicitResult(ElicitResult.Action.CANCEL, null));
            }
        }));
    }

    /** Whether the last drive left the execution paused, owned by the paused executions from then on. */
    boolean pausedFor() {
        return pausedFor;
    }

    void pausedFor(boolean paused) {
        this.pausedFor = paused;
    }

    /** Closed, and its code has left the context: what the code held is garbage now. */
    boolean released() {
        return closed && context == null && !lock.isLocked();
    }

    boolean closed() {
        return closed;
    }

    /**
     * Runs one entry into the code on this execution's lane, where entries run one at a time; what follows runs on a
     * host thread, never on the code's thread, which may have been lowered meanwhile.
     */
    Mono<Step> onLane(Supplier<Step> entry) {
        return Mono.fromSupplier(entry).subscribeOn(lane).publishOn(host);
    }

    /**
     * Runs an entry that is Tether's own, not the code's (opening the context), on a host thread, which is never
     * lowered. What follows runs there too.
     */
    Mono<Step> onHost(Supplier<Step> entry) {
        return Mono.fromSupplier(entry).subscribeOn(host);
    }

    /** Where what follows an entry runs (a tool call the code started, too): {@link ExecutionPool#host()}. */
    Scheduler host() {
        return host;
    }

    Scheduler lane() {
        return lane;
    }

    /** What the code allocated so far, the entry running now included: see {@link MemoryWatch}. */
    Allocations allocations() {
        return allocations;
    }

    private Step enter(Runnable action) {
        lock.lock();
        try {
            if (closed) {
                return new Step(Settled.failed("Error: " + closedWhy), inFlight, null);
            }
            allocations.entered();
            try {
                action.run();
            }
            catch (RuntimeException ex) {
                // Closed from another thread (time limit, client gone): the code was cancelled mid-entry, or the
                // context was gone before it.
                if (closed || ex instanceof PolyglotException polyglot && polyglot.isCancelled()) {
                    return new Step(Settled.failed("Error: " + closedWhy), inFlight, null);
                }
                if (!(ex instanceof PolyglotException polyglot)) {
                    throw ex;
                }
                // The code failed outside its promise (the heap ran out, a host callback broke): it ends here.
                settled = Settled.failed(polyglot.isResourceExhausted()
                        ? "Error: the execution ran out of memory (" + ex.getMessage() + ")" : "Error: " + ex.getMessage());
            }
            return new Step(settled, inFlight, parked.peek());
        }
        finally {
            allocations.left();
            lock.unlock();
        }
    }

    /** A server's question as the journal keeps it: its JSON. */
    private static String question(PendingCall asking) {
        try {
            return McpJsonDefaults.getMapper().writeValueAsString(asking.elicitation() == null ? null : asking.elicitation().request());
        }
        catch (java.io.IOException unwritable) {
            return String.valueOf(asking.elicitation());
        }
    }

    private void locked(Runnable action) {
        lock.lock();
        try {
            action.run();
        }
        finally {
            lock.unlock();
        }
    }

    // ---- host functions, called by the prelude under the lock ----------------------------------------

    /** Starts a call; answers why not when the execution has too many started already (the prelude rejects it). */
    private @Nullable Object invoke(Value... args) {
        if (inFlight + parked.size() >= maxPendingCalls) {
            // Code that goes on starting calls as many times again after being refused is not awaiting any: a loop
            // of 100,000 would build 100,000 promises and errors first. It is stopped (from another thread: this one
            // runs the code) with the limit named.
            if (++refusedInARow == maxPendingCalls) {
                host.schedule(() -> close("the execution was stopped: it started " + maxPendingCalls + " more tool calls after "
                        + "reaching the limit of " + maxPendingCalls + " in flight (tether.execution.max-pending-calls) without awaiting any"));
            }
            return "too many tool calls of this execution in flight: the limit is " + maxPendingCalls
                    + " (tether.execution.max-pending-calls); await some before starting more";
        }
        refusedInARow = 0;
        // Executor's CLI calls tools["tools"]["github"]…: one name for a tool however the code reaches it
        PendingCall call = new PendingCall(journal.nextCall(), "tools." + ToolAddress.path(args[0].asString()),
                args[1].isNull() ? null : args[1].asString(), args[2].asString(), args[3], args[4], null, false, null);
        inFlight++;
        if (journal.replaying()) {
            // Answered from the journal, never sent: the replay hands the recorded answers back in their order.
            String wrong = journal.replayCall(call.ordinal(), call.address(), call.argsJson());
            if (wrong != null && diverged == null) {
                diverged = wrong;
            }
            replayed.put(call.ordinal(), call);
            return null;
        }
        journal.called(call.ordinal(), call.address(), call.argsJson());
        Objects.requireNonNull(calls, "attached").tryEmitNext(call);
        return null;
    }

    /** What {@code Date} reads as now (epoch ms), recorded, or the recorded value while the code is replayed. */
    private Object clock(Value... args) {
        return (double) journal.now();
    }

    /** What {@code Math.random()} answers, recorded, or the recorded value while the code is replayed. */
    private Object random(Value... args) {
        return journal.random();
    }

    /** Keeps a console line; answers why not when the output would grow past its limit. */
    private @Nullable Object log(Value... args) {
        return console.add(args[0].asString(), args[1].asString());
    }

    /** The code's end: its value (written by Tether, see {@link ResultClone}) or the text of what it threw. */
    private @Nullable Object settle(Value... args) {
        if (settled == null) {
            settled = args[0].asBoolean() ? Settled.written(args[1], maxOutputBytes) : Settled.failed(args[2].asString());
        }
        return null;
    }
}
