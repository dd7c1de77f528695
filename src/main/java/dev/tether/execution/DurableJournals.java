package dev.tether.execution;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.identity.Principal;
import dev.tether.replicas.ReplicaIds;
import dev.tether.store.ExecutionJournals;
import dev.tether.store.ExecutionJournals.PauseWrite;
import dev.tether.store.ExecutionJournals.StoredJournal;

/**
 * The executions' journals in the store, which make a pause outlive the replica that holds it: a pause written (what
 * the journal added since the last one), a row claimed for a resume so that one replica runs the answer, the caller's
 * stored pause found and loaded for a rebuild, an ended execution's row removed, and every minute the expired ones
 * swept. Off ({@code tether.execution.durable=false}), nothing is written and nothing is found.
 */
final class DurableJournals implements Disposable {

    private static final Logger log = LoggerFactory.getLogger(DurableJournals.class);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** How often every replica removes the journals that expired. */
    private static final Duration SWEEP = Duration.ofMinutes(1);
    /** A claimed journal outlives its run's time limit by this much before any replica may remove it. */
    private static final Duration CLAIM_MARGIN = Duration.ofMinutes(1);

    private final ExecutionJournals journals;
    private final ExecutionProperties properties;
    /** This run of this replica, as the journals it claims name it: its instance and a random id of this start. */
    private final String holder;
    private final Disposable sweep;

    DurableJournals(ExecutionJournals journals, ExecutionProperties properties, ReplicaIds names) {
        this.journals = journals;
        this.properties = properties;
        this.holder = names.instance() + "/" + UUID.randomUUID();
        this.sweep = properties.durable() ? Flux.interval(SWEEP, SWEEP, Schedulers.parallel()).concatMap(tick -> sweepOnce())
                .subscribe(removed -> { }, failed -> log.warn("the sweep of expired execution journals stopped: {}", failed.toString()))
                : Disposables.disposed();
    }

    /**
     * Writes what the journal added since its last pause, and the pause; a journal the store does not take is live only
     * from then on (the pause is answered all the same, and said in the log not to survive).
     */
    Mono<Void> write(Journal journal, String pauseId, ExecutionAnswer.Pause view, Principal owner) {
        if (!journal.durable()) {
            return Mono.empty();
        }
        boolean first = !journal.stored();
        long version = journal.version();
        PauseWrite write = journal.pause(pauseId, holder, JSON.writeValueAsString(Map.of("text", view.text(), "structured", view.structured())),
                System.currentTimeMillis() + properties.pausedExpiry().toMillis());
        Mono<Boolean> stored = first ? journals.create(write, journal.code(), journal.origin(), owner).thenReturn(true)
                : journals.repause(write, version);
        return stored.doOnNext(taken -> {
                    if (!taken) {
                        throw new IllegalStateException("its row is not at version " + version + " any more");
                    }
                    if (first) {
                        journal.created();
                    }
                    else {
                        journal.advanced();
                    }
                })
                .onErrorResume(failed -> {
                    journal.lost();
                    log.warn("paused execution {} is not in the store ({}): its pause holds in memory, but does not survive this replica",
                            pauseId, failed.toString());
                    return Mono.empty();
                })
                .then();
    }

    /**
     * Claims a stored journal at the version this execution holds it, so that no other replica resumes it too; a
     * journal never stored has nothing to claim. Fails with {@link ExecutionNotFoundException} when another resume won.
     */
    Mono<Void> claim(String executionId, Journal journal) {
        if (!journal.stored()) {
            return Mono.empty();
        }
        return journals.claim(String.valueOf(journal.journalId()), journal.version(), holder, claimExpiry())
                .flatMap(won -> {
                    if (!won) {
                        log.info("paused execution {} was resumed by another replica meanwhile; its context here is closed", executionId);
                        return Mono.error(new ExecutionNotFoundException(executionId));
                    }
                    journal.advanced();
                    return Mono.empty();
                });
    }

    /**
     * The stored journal of the caller's pause that still waits; fails with {@link ExecutionNotFoundException} otherwise
     * (another user's too).
     */
    Mono<StoredJournal> stored(String executionId, Principal caller) {
        Mono<StoredJournal> row = properties.durable() ? journals.find(executionId, caller) : Mono.empty();
        return row.filter(journal -> journal.paused() && journal.pause() != null && journal.expiresAt() > System.currentTimeMillis())
                .switchIfEmpty(Mono.error(() -> new ExecutionNotFoundException(executionId)));
    }

    /** The whole journal of a stored pause, its segments read, to rebuild the execution from. */
    Mono<Journal> load(StoredJournal row) {
        return journals.segments(row.journalId()).collectList()
                .map(segments -> Journal.load(row, segments, properties.maxJournal().toBytes()));
    }

    /** What a stored pause waits for, as its pause answered it. */
    static ExecutionAnswer.Pause view(StoredJournal journal) {
        JsonNode pause = JSON.readTree(String.valueOf(journal.pause()));
        return new ExecutionAnswer.Pause(pause.path("text").asString(), pause.path("structured").asString());
    }

    /** Removes a stored pause nobody will resume. */
    Mono<Void> remove(StoredJournal row) {
        return journals.remove(row.journalId(), row.version()).then();
    }

    /** Removes the row of an ended execution's journal, if it has one; one the store keeps expires in time. */
    Mono<Void> ended(Journal journal) {
        return Mono.defer(() -> {
            Journal.Row row = journal.ended();
            return row == null ? Mono.empty() : journals.remove(row.journalId(), row.version())
                    .onErrorResume(failed -> {
                        log.warn("the journal of an ended execution stays in the store until it expires: {}", failed.toString());
                        return Mono.empty();
                    })
                    .then();
        });
    }

    private long claimExpiry() {
        return System.currentTimeMillis() + properties.timeout().plus(CLAIM_MARGIN).toMillis();
    }

    private Mono<Long> sweepOnce() {
        return journals.removeExpired(System.currentTimeMillis())
                .doOnNext(removed -> {
                    if (removed > 0) {
                        log.info("removed {} execution journals that expired", removed);
                    }
                })
                .onErrorResume(failed -> {
                    log.warn("removing expired execution journals failed (tried again in {}): {}", SWEEP, failed.toString());
                    return Mono.empty();
                });
    }

    /** Stops the sweep; the journals stay in the store. */
    @Override
    public void dispose() {
        sweep.dispose();
    }
}
