package dev.tether.execution;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Keeps executions' code from filling the daemon's heap. GraalJS's community edition cannot cap a context's heap, so
 * this watches from outside: every {@link #TICK} it reads the old generation (what survived collections: what code
 * holds, not its garbage). Once it holds more than the daemon's own {@linkplain #baseline baseline} plus
 * {@code tether.execution.max-memory} (Executor gives QuickJS 64 MB), or {@link #PRESSURE} of its maximum whichever
 * comes first, a full collection tells whether the pressure is real; if it is, the executions that allocated the most
 * (each at least a quarter of that budget) are stopped until what they allocated covers what the heap holds beyond
 * the baseline, and past {@link #CRITICAL} at least the one that allocated the most whatever it allocated. One bomb
 * ends alone; three at once end in one round. Allocation counts garbage, so only real pressure makes it count. The
 * code ends with an error that says so; the daemon and the other executions go on. Once the stopped code has let go
 * of its context, one more full collection lets the collector give the heap it grew back to the system (the
 * launcher's {@code MaxHeapFreeRatio}): the daemon's resident memory returns to what it was before the bomb. The same
 * holds for code that ended by itself after allocating much (100,000 promises refused).
 *
 * <p>The baseline follows the daemon's own memory (catalogs, sessions, the engine's caches), which may grow long after
 * the first execution: whenever no code is live and the old generation holds half a budget more than the baseline, a
 * full collection learns it again. Else a daemon grown past baseline plus budget would stop innocent executions that
 * allocated a quarter of a budget, garbage included, and collect twice a second while they ran.
 */
@Component
final class MemoryWatch implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(MemoryWatch.class);
    static final Duration TICK = Duration.ofMillis(100);
    static final double PRESSURE = 0.5;
    static final double CRITICAL = 0.85;
    /** Full collections asked for at most this often, so that steady pressure does not become steady pauses. */
    private static final long MIN_GC_INTERVAL_NANOS = Duration.ofMillis(500).toNanos();

    private final Set<Execution> live = ConcurrentHashMap.newKeySet();
    /** Executions that allocated much and ended (stopped or not), until their code lets go of its context. */
    private final Set<Execution> ended = ConcurrentHashMap.newKeySet();
    private final long maxMemory;
    private final @Nullable MemoryPoolMXBean old = oldGeneration();
    private final Scheduler timer;
    /** Nanoseconds, for spacing full collections. */
    private final LongSupplier clock;
    private final Disposable ticking;
    /**
     * What the old generation holds without code: what it held after the last full collection that ran while no
     * execution was live (else the least after any), learnt after the first execution and again while no code is live
     * once the old generation grew by half a budget. Starts unknown.
     */
    private long baseline = Long.MAX_VALUE;
    private long lastGc = Long.MIN_VALUE;
    private volatile boolean watched;

    @Autowired
    MemoryWatch(ExecutionProperties properties) {
        this(properties, Schedulers.newSingle("tether-js-memory", true), System::nanoTime);
    }

    /** Ticks on {@code timer}; {@code clock} (nanoseconds) spaces full collections. */
    MemoryWatch(ExecutionProperties properties, Scheduler timer, LongSupplier clock) {
        this.timer = timer;
        this.clock = clock;
        this.maxMemory = properties.maxMemory().toBytes();
        this.ticking = Allocations.supported()
                ? timer.schedulePeriodically(this::tick, TICK.toMillis(), TICK.toMillis(), TimeUnit.MILLISECONDS)
                : () -> { };
        if (!Allocations.supported()) {
            log.warn("this JVM does not count allocations per thread: executions' memory is not watched");
        }
    }

    void watch(Execution execution) {
        watched = true;
        live.add(execution);
    }

    void forget(Execution execution) {
        live.remove(execution);
        if (execution.allocations().total() >= maxMemory / 4) {
            ended.add(execution);
        }
    }

    private void tick() {
        try {
            live.removeIf(Execution::closed); // closed elsewhere: expired while paused, the daemon stopping
            shrinkOnceStoppedLetGo();
            Heap heap = heap();
            if (live.isEmpty()) {
                // After the first execution, and whenever the daemon's own memory grew by half a budget since: the
                // baseline to measure code's memory against, following the daemon's.
                if (watched && (baseline == Long.MAX_VALUE || heap.used() > baseline + maxMemory / 2)) {
                    collect();
                }
                return;
            }
            if (heap.used() < pressureLine(heap)) {
                return;
            }
            if (heaviest().isEmpty() && heap.filled() < CRITICAL || !collect()) {
                return;
            }
            heap = heap(); // what is left is what code and the daemon hold
            if (heap.used() < pressureLine(heap) && heap.filled() < CRITICAL) {
                return;
            }
            for (Execution execution : toStop(heap)) {
                String reason = "the execution was stopped: it allocated " + (execution.allocations().total() >> 20)
                        + " MB while the daemon's heap was " + Math.round(heap.filled() * 100) + "% full (tether.execution.max-memory is "
                        + (maxMemory >> 20) + " MB)";
                log.warn("{}", reason);
                live.remove(execution);
                ended.add(execution);
                execution.close(reason);
            }
        }
        catch (RuntimeException ex) {
            log.warn("the memory watch failed a round: {}", ex.toString());
        }
    }

    /** What the old generation holds without code, as last learnt; {@link Long#MAX_VALUE} while unknown. */
    long baseline() {
        return baseline;
    }

    /** Where the old generation is under pressure: the baseline plus one execution's budget, or PRESSURE of it. */
    private long pressureLine(Heap heap) {
        long ofMax = (long) (heap.max() * PRESSURE);
        return baseline == Long.MAX_VALUE ? ofMax : Math.min(ofMax, baseline + maxMemory);
    }

    /** Live executions that allocated at least a quarter of the budget (the only ones stopped), the most first. */
    private List<Execution> heaviest() {
        return live.stream()
                .filter(execution -> execution.allocations().total() >= maxMemory / 4)
                .sorted(Comparator.comparingLong((Execution execution) -> execution.allocations().total()).reversed())
                .toList();
    }

    /**
     * Who is stopped under real pressure: the heaviest allocators, the most first, until what they allocated covers
     * what the heap holds beyond the baseline (allocation is at least what code holds: one bomb alone is enough; three
     * at once, which passed the line together, end together); past CRITICAL, at least the heaviest whatever it allocated.
     */
    private List<Execution> toStop(Heap heap) {
        long excess = heap.used() - Math.min(baseline, heap.used());
        List<Execution> stopping = new ArrayList<>();
        long covered = 0;
        for (Execution execution : heaviest()) {
            if (covered >= excess && !stopping.isEmpty()) {
                break;
            }
            stopping.add(execution);
            covered += execution.allocations().total();
        }
        if (stopping.isEmpty() && heap.filled() >= CRITICAL) {
            live.stream().max(Comparator.comparingLong(execution -> execution.allocations().total())).ifPresent(stopping::add);
        }
        return stopping;
    }

    /** A full collection, unless one ran too recently; what the old generation holds after it may be the baseline. */
    private boolean collect() {
        long now = clock.getAsLong();
        if (lastGc != Long.MIN_VALUE && now - lastGc < MIN_GC_INTERVAL_NANOS) {
            return false;
        }
        lastGc = now;
        System.gc();
        MemoryUsage after = old == null ? null : old.getCollectionUsage();
        // Where the collector does not say what the old generation kept, what it holds now is close
        long held = after != null && after.getUsed() > 0 ? after.getUsed() : heap().used();
        baseline = live.isEmpty() ? held : Math.min(baseline, held);
        return true;
    }

    /**
     * The serial collector keeps the heap a bomb grew until a full collection finds it free: once every execution
     * that allocated much and ended has let go of its context, one collection gives it back, if the heap grew past
     * twice the baseline (ordinary executions that churned garbage cost no collection).
     */
    private void shrinkOnceStoppedLetGo() {
        if (ended.isEmpty() || !ended.stream().allMatch(Execution::released)) {
            return;
        }
        MemoryUsage usage = old == null ? null : old.getUsage();
        boolean grown = baseline == Long.MAX_VALUE || usage == null || usage.getCommitted() > 2 * baseline;
        if (!grown || collect()) {
            ended.clear();
        }
    }

    /** What the old generation holds and may hold; the whole heap where no pool is the old generation. */
    private Heap heap() {
        if (old != null && old.getUsage().getMax() > 0) {
            MemoryUsage usage = old.getUsage();
            return new Heap(usage.getUsed(), usage.getMax());
        }
        Runtime runtime = Runtime.getRuntime();
        return new Heap(runtime.totalMemory() - runtime.freeMemory(), runtime.maxMemory());
    }

    private record Heap(long used, long max) {

        double filled() {
            return (double) used / max;
        }
    }

    private static @Nullable MemoryPoolMXBean oldGeneration() {
        return ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(pool -> pool.getType() == MemoryType.HEAP)
                .filter(pool -> pool.getName().contains("Old") || pool.getName().contains("Tenured"))
                .findFirst().orElse(null);
    }

    @Override
    public void destroy() {
        ticking.dispose();
        timer.dispose();
    }
}
