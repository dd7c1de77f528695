package dev.tether.execution;

import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.pool.InstrumentedPool;
import reactor.pool.PoolAcquirePendingLimitException;
import reactor.pool.PoolBuilder;
import reactor.pool.PooledRef;

/**
 * The threads executions run on, apart from every other pool of the daemon: code that loops for ever holds one of
 * these and nothing else, never a thread that spawns children, climbs a teardown ladder or serves HTTP.
 *
 * <p>At most {@code max-concurrent} executions are admitted at once and {@code max-queued} more wait for a place;
 * beyond, an execution is refused at once ({@link ExecutionRefusedException}). An admitted execution enters its code
 * through its own {@link #lane()}: one entry at a time, in order, without a thread waiting on another, so the
 * {@code max-concurrent} threads always suffice. Each entry starts at the daemon's priority; one that runs longer than
 * {@link #DEMOTE_AFTER} is lowered to nice {@code tether.execution.nice}, 19 unless set ({@link CodeThreads}), so
 * endless loops cannot make new code wait.
 *
 * <p>Everything around the code runs on the {@link #host()} threads, at the daemon's priority and never lowered: what
 * follows each entry (the answer, the tool calls the code started, closing), and stopping code (a time limit, a client
 * gone). A code thread lowered while its entry ran would otherwise go on at nice 19 with what follows, and a thread it
 * started would be born at nice 19 (a Reactor pool starts its threads on the thread that first hands it a task): the
 * first {@code return 1} beside 36 loops waited 1.5 to 20 s for such a thread on a busy host.
 */
@Component
final class ExecutionPool implements DisposableBean {

    /** How long an entry into code runs at the daemon's priority before its thread is lowered. */
    static final Duration DEMOTE_AFTER = Duration.ofMillis(100);

    private final CodeThreads threads;
    /**
     * Closing waits for the code to leave, one per admitted execution at most, and 36 loops are closed at once, not 4
     * by 4: twice {@code max-concurrent}, so that closing every execution at once leaves threads for what follows entries.
     */
    private final CodeThreads hostThreads;
    private final Scheduler host;
    private final InstrumentedPool<Object> slots;
    private final int maxConcurrent;
    private final int maxQueued;

    ExecutionPool(ExecutionProperties properties) {
        this.maxConcurrent = properties.maxConcurrent();
        this.maxQueued = properties.maxQueued();
        this.hostThreads = new CodeThreads("tether-js-host", 2 * maxConcurrent, 0, DEMOTE_AFTER);
        this.host = Schedulers.fromExecutor(hostThreads);
        this.threads = new CodeThreads("tether-js", maxConcurrent, properties.nice(), DEMOTE_AFTER);
        this.slots = PoolBuilder.from(Mono.fromSupplier(Object::new))
                .sizeBetween(0, maxConcurrent)
                .maxPendingAcquire(maxQueued)
                .buildPool();
    }

    /** Runs {@code work} once admitted; refused at once with {@link ExecutionRefusedException} when the queue is full. */
    <T> Mono<T> admit(Mono<T> work) {
        return Mono.usingWhen(slots.acquire(), slot -> work, PooledRef::release, (slot, error) -> slot.release(), PooledRef::release)
                .onErrorMap(PoolAcquirePendingLimitException.class, full -> new ExecutionRefusedException(maxConcurrent, maxQueued));
    }

    /** A new lane: the tasks given to it run one at a time, in order, on this pool's threads. */
    Scheduler lane() {
        return Schedulers.fromExecutor(new Lane(threads));
    }

    /**
     * Where what surrounds the code runs, at the daemon's priority: what follows each entry, and stopping code (closing
     * a context waits for the code on another thread to leave it).
     */
    Scheduler host() {
        return host;
    }

    /** Executions admitted now. */
    int running() {
        return slots.metrics().acquiredSize();
    }

    /** Whether every place is taken now. */
    boolean full() {
        return running() >= maxConcurrent;
    }

    /** Executions waiting for a place now. */
    int queued() {
        return slots.metrics().pendingAcquireSize();
    }

    @Override
    public void destroy() {
        slots.disposeLater().subscribe();
        threads.shutdownNow();
        hostThreads.shutdownNow();
    }

    /** Runs its tasks in order, one at a time, each on some thread of the pool; holds no thread between them. */
    private static final class Lane implements Executor {

        private final Executor threads;
        private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
        private final AtomicBoolean draining = new AtomicBoolean();

        Lane(Executor threads) {
            this.threads = threads;
        }

        @Override
        public void execute(Runnable task) {
            tasks.add(task);
            schedule();
        }

        private void schedule() {
            if (!tasks.isEmpty() && draining.compareAndSet(false, true)) {
                threads.execute(this::drain);
            }
        }

        private void drain() {
            try {
                Runnable task = tasks.poll();
                if (task != null) {
                    task.run();
                }
            }
            finally {
                draining.set(false);
                schedule();
            }
        }
    }
}
