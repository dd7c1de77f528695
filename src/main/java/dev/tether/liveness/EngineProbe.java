package dev.tether.liveness;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.tether.execution.Executions;
import dev.tether.process.ChildProcesses;
import dev.tether.store.StoreProbe;

/**
 * Whether the engine can still do its work, asked of the parts that do it: a task through the timers' threads, the
 * threads that start and end children, the executions' pool, and a statement through the store. Each must answer
 * within {@link #BOUND}. The verdict is kept for {@link #KEPT}, so that a supervisor polling often costs nothing.
 */
@Component
public final class EngineProbe {

    static final Duration BOUND = Duration.ofSeconds(3);
    static final Duration KEPT = Duration.ofSeconds(1);

    /** The verdict: {@code problems} names each part that did not answer, empty when all did. */
    public record Verdict(List<String> problems) {

        public boolean ok() {
            return problems.isEmpty();
        }
    }

    private final Mono<Verdict> verdict;

    EngineProbe(Executions executions, ChildProcesses children, StoreProbe store) {
        Map<String, Mono<Void>> parts = Map.of(
                "timers", Mono.fromRunnable(() -> { }).subscribeOn(Schedulers.parallel()).then(),
                "children", children.probe(),
                "executions", executions.probe(),
                "store", store.probe());
        this.verdict = Flux.fromIterable(parts.entrySet())
                .flatMap(part -> part.getValue().timeout(BOUND).then(Mono.<String>empty())
                        .onErrorResume(failure -> Mono.just(part.getKey() + ": " + (failure instanceof TimeoutException
                                ? "no answer within " + BOUND.toSeconds() + " s" : failure.toString()))))
                .sort()
                .collectList()
                .map(Verdict::new)
                .cache(KEPT);
    }

    public Mono<Verdict> check() {
        return verdict;
    }
}
