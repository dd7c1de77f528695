package dev.tether.store;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.identity.Principal;

/**
 * The journals of paused executions ({@code execution_journal}, one segment row per pause in
 * {@code execution_journal_segment}), what any replica needs to rebuild one by replay. The store keeps them as text it
 * seals ({@code store.secrets.SecretBox}), bound to their row: what they hold (code, tool answers, a user's answers) is the
 * execution's own business. Every change but {@link #create} is a compare-and-set on {@code version}, so that of two
 * replicas that want the same execution one wins and the other learns it lost. A journal is its user's (the subject of
 * the principal that paused it): {@link #find} answers it to that user alone, and to the daemon's own work, as the
 * paused executions a replica holds in memory do; to anyone else it does not exist.
 */
public interface ExecutionJournals {

    /** A journal's row as stored; its entries are in its segments ({@link #segments}). */
    record StoredJournal(String journalId, @Nullable String pauseId, boolean paused, String holder, long version, String code,
            @Nullable String pause, @Nullable String origin, long bytes, long expiresAt) {
    }

    /**
     * What a pause writes: the pause ({@code pauseId}, what it shows), the segment of entries added since the last pause
     * (number {@code seq}, from 0), the journal's size and when the pause expires.
     */
    record PauseWrite(String journalId, String pauseId, String holder, String pause, int seq, String segment, long bytes,
            long expiresAt) {
    }

    /** Stores a new journal of {@code owner}'s, paused for the first time, at version 1. */
    Mono<Void> create(PauseWrite pause, String code, @Nullable String origin, Principal owner);

    /**
     * A journal claimed at {@code version} pauses again: adds its segment and makes it paused at {@code version + 1}.
     * False (nothing written) when the row is not at that version any more.
     */
    Mono<Boolean> repause(PauseWrite pause, long version);

    /**
     * The journal whose pause is {@code pauseId}, paused or not, when it is {@code caller}'s (or the caller is the daemon's
     * own work); empty when there is none, or it is another user's.
     */
    Mono<StoredJournal> find(String pauseId, Principal caller);

    /** The segments of a journal, in the order they were written. */
    Flux<String> segments(String journalId);

    /**
     * Claims a paused journal at {@code version} for a resume by {@code holder}: it is running at {@code version + 1},
     * with no pause id, until {@code expiresAt}. False when it is not paused at that version (another resume won).
     */
    Mono<Boolean> claim(String journalId, long version, String holder, long expiresAt);

    /** Removes the journal if it is still at {@code version}: its execution ended. False when it is not. */
    Mono<Boolean> remove(String journalId, long version);

    /** Removes every journal that expired before {@code now} (epoch ms); answers how many. */
    Mono<Long> removeExpired(long now);
}
