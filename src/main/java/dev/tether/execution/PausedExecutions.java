package dev.tether.execution;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

import dev.tether.identity.Principal;
import dev.tether.replicas.ReplicaIds;

/**
 * The executions this replica holds paused in memory, waiting for an approval or for the answer to a server's question,
 * by pause id (random, never repeated: {@link ReplicaIds#execution()}): the fast path of a resume. Bounded in number;
 * each expires after {@code expiry} and is then ended ({@code expired}). A paused execution holds a context and the
 * code's pending promise, never a thread. What survives this replica is its journal in the store ({@link Journal}).
 * A pause is its owner's: for anyone else it does not exist ({@link ExecutionNotFoundException}, as for an unknown id).
 */
final class PausedExecutions {

    private static final Logger log = LoggerFactory.getLogger(PausedExecutions.class);

    /** One pause: the execution, the call it waits on, what the pause shows, and whose it is. */
    record Pause(String id, Execution execution, PendingCall call, ExecutionAnswer.Pause view, Principal owner) {
    }

    /** More executions wait for approval than the limit allows. */
    static final class TooManyPausedException extends RuntimeException {

        TooManyPausedException(int limit) {
            super("too many executions wait for approval (limit " + limit + "); resume or cancel one first");
        }
    }

    private final Map<String, Entry> paused = new LinkedHashMap<>();
    private final ReplicaIds names;
    private final Consumer<Pause> expired;
    private final int limit;
    private final Duration expiry;
    private final Scheduler timer;

    private record Entry(Pause pause, Disposable expiry) {
    }

    /** {@code expired}: ends an execution whose pause expired (closes it, and removes its journal). */
    PausedExecutions(int limit, Duration expiry, Scheduler timer, ReplicaIds names, Consumer<Pause> expired) {
        this.names = names;
        this.expired = expired;
        this.limit = limit;
        this.expiry = expiry;
        this.timer = timer;
    }

    String nextId() {
        return names.execution();
    }

    /** Keeps a pause until it is taken or expires; fails with {@link TooManyPausedException} when full. */
    synchronized void put(Pause pause) {
        if (paused.size() >= limit) {
            throw new TooManyPausedException(limit);
        }
        Disposable expiring = timer.schedule(() -> expire(pause.id()), expiry.toMillis(), TimeUnit.MILLISECONDS);
        paused.put(pause.id(), new Entry(pause, expiring));
    }

    /** What the pause shows, to its owner; {@link ExecutionNotFoundException} for anyone else, as for an unknown id. */
    synchronized ExecutionAnswer.Pause view(String id, Principal caller) {
        Entry entry = paused.get(id);
        if (entry == null || !mine(entry.pause(), caller)) {
            throw new ExecutionNotFoundException(id);
        }
        return entry.pause().view();
    }

    /**
     * Removes the caller's pause for its resume when this replica holds it in memory, once {@code check} passed; else
     * null. Another user's fails with {@link ExecutionNotFoundException}, as an unknown id does.
     */
    synchronized @Nullable Pause takeHeld(String id, Principal caller, java.util.function.Consumer<Pause> check) {
        return paused.containsKey(id) ? take(id, caller, check) : null;
    }

    /**
     * The caller's pause {@code id} when this replica holds it in memory, else null; another user's fails with
     * {@link ExecutionNotFoundException}.
     */
    synchronized @Nullable Pause find(String id, Principal caller) {
        Entry entry = paused.get(id);
        if (entry != null && !mine(entry.pause(), caller)) {
            throw new ExecutionNotFoundException(id);
        }
        return entry == null ? null : entry.pause();
    }

    /** Removes the caller's pause for its resume; fails with {@link ExecutionNotFoundException} when it has none. */
    synchronized Pause take(String id, Principal caller) {
        return take(id, caller, pause -> {
        });
    }

    /** As {@link #take(String, Principal)}, once {@code check} passed; a pause whose check throws stays as it was. */
    synchronized Pause take(String id, Principal caller, java.util.function.Consumer<Pause> check) {
        Entry entry = paused.get(id);
        if (entry == null || !mine(entry.pause(), caller)) {
            throw new ExecutionNotFoundException(id);
        }
        check.accept(entry.pause());
        paused.remove(id);
        entry.expiry().dispose();
        return entry.pause();
    }

    /**
     * Whether {@code caller} may see and resume the pause: the user whose execution it is (an admin is no exception:
     * its code and its approvals are that user's), or the daemon's own work. The store's journals answer the same
     * ({@code ExecutionJournals}).
     */
    private static boolean mine(Pause pause, Principal caller) {
        return caller.daemon() || caller.subject().equals(pause.owner().subject());
    }

    synchronized int size() {
        return paused.size();
    }

    /** Whether this replica holds the pause {@code id} in memory. */
    synchronized boolean holds(String id) {
        return paused.containsKey(id);
    }

    /** Closes every paused execution, leaving their journals to be resumed after the start: the daemon stops. */
    void closeAll() {
        Map<String, Entry> all;
        synchronized (this) {
            all = new LinkedHashMap<>(paused);
            paused.clear();
        }
        all.values().forEach(entry -> {
            entry.expiry().dispose();
            entry.pause().execution().close();
        });
    }

    private void expire(String id) {
        Entry entry;
        synchronized (this) {
            entry = paused.remove(id);
        }
        if (entry != null) {
            log.info("paused execution {} expired after {} without a resume; closed", id, expiry);
            expired.accept(entry.pause());
        }
    }
}
