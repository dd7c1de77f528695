package dev.tether.execution;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.execution.Execution.Step;

/**
 * Rebuilds a paused execution that another replica (or an earlier run of this one) paused, from its journal: its
 * context opened, its code run again with every call answered from the journal in the recorded order (never sent
 * again), until it stands where it paused. Counted in {@code tether.executions.rebuilt} by outcome.
 */
final class JournalReplay {

    private static final Logger log = LoggerFactory.getLogger(JournalReplay.class);

    private final JsEngine engine;
    private final ExecutionProperties properties;
    private final Counter rebuilt;
    private final Counter notRebuilt;

    JournalReplay(JsEngine engine, ExecutionProperties properties, MeterRegistry registry) {
        this.engine = engine;
        this.properties = properties;
        this.rebuilt = counter(registry, "resumed");
        this.notRebuilt = counter(registry, "failed");
    }

    private static Counter counter(MeterRegistry registry, String outcome) {
        return Counter.builder("tether.executions.rebuilt").tag("outcome", outcome)
                .description("paused executions rebuilt from their journal by replay, to be resumed on a replica that did not hold them "
                        + "(failed: the code diverged from its journal, or its pause cannot go on)")
                .register(registry);
    }

    /**
     * Opens the context of {@code execution} (made of the journal of the pause {@code executionId}) and replays its
     * journal; emits the call it paused on, or fails with {@link ReplayFailedException} saying where it left its
     * journal (or {@link JsUnavailableException}). Who owns {@code execution} closes it on every exit.
     */
    Mono<PendingCall> rebuild(Execution execution, String executionId) {
        return Mono.defer(() -> {
            long started = System.nanoTime();
            int replayed = execution.journal().deliveries().size();
            return execution.onHost(() -> execution.open(engine))
                    .then(replay(execution))
                    .doOnNext(call -> {
                        rebuilt.increment();
                        log.info("paused execution {} rebuilt from its journal in {} ms ({} answers replayed)", executionId,
                                (System.nanoTime() - started) / 1_000_000, replayed);
                    })
                    .doOnError(ReplayFailedException.class, failed -> {
                        notRebuilt.increment();
                        log.warn("paused execution {} could not be rebuilt from its journal: {}", executionId, failed.getMessage());
                    });
        });
    }

    /**
     * Runs the code again, answering its calls from the journal in the recorded order, until the execution stands where
     * it paused; emits the call it paused on, or fails with {@link ReplayFailedException} saying where it left its journal.
     */
    private Mono<PendingCall> replay(Execution execution) {
        Journal journal = execution.journal();
        return execution.onLane(() -> execution.start(journal.code()))
                .flatMap(step -> replaying(execution, step))
                .thenMany(Flux.fromIterable(journal.deliveries()))
                .concatMap(answer -> execution.onLane(() -> execution.redeliver(answer)).flatMap(step -> replaying(execution, step)))
                .then(execution.onLane(execution::replayed))
                .flatMap(step -> replaying(execution, step).then(Mono.justOrEmpty(step.parked())))
                .switchIfEmpty(Mono.error(() -> new ReplayFailedException("the rebuilt execution did not stand where it paused")))
                .timeout(properties.timeout(), Mono.error(() -> new ReplayFailedException("its replay did not reach the pause within "
                        + properties.timeout().toMillis() + "ms")));
    }

    /** Fails once the replayed code left its journal or ended: both mean it never reaches its pause. */
    private static Mono<Void> replaying(Execution execution, Step step) {
        String wrong = execution.diverged();
        if (wrong != null) {
            return Mono.error(new ReplayFailedException("the code diverged from its journal when the execution was rebuilt: " + wrong
                    + "; no call was sent again"));
        }
        if (step.settled() != null) {
            return Mono.error(new ReplayFailedException("the code ended before the point where it paused when the execution was rebuilt ("
                    + (step.settled().ok() ? "it returned" : step.settled().error()) + "); no call was sent again"));
        }
        return Mono.empty();
    }

    /** The code of a rebuilt execution did not come back to where it paused. */
    static final class ReplayFailedException extends RuntimeException {

        ReplayFailedException(String message) {
            super(message, null, false, false);
        }
    }
}
