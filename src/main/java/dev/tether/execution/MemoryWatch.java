package dev.tether.execution;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Keeps executions' code from filling the daemon's heap. GraalJS's community edition cannot cap a context's heap, so
 * this watches from outside: every {@link #TICK} it reads the old generation (what survived collections: what code
 * holds, not its garbage). Past {@link #PRESSURE} of it, a full collection tells whether the pressure is real; if it
 * is, the execution that allocated the most is stopped when it allocated more than {@code tether.execution.max-memory}
 * (Executor gives QuickJS 64 MB), or whatever it allocated once the heap is past {@link #CRITICAL}. The code ends
 * with an error that says so; the daemon and the other executions go on.
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
    private final long maxMemory;
    private final MemoryPoolMXBean old = oldGeneration();
    private final Scheduler timer = Schedulers.newSingle("tether-js-memory", true);
    private final Disposable ticking;
    private long lastGc;

    MemoryWatch(ExecutionProperties properties) {
        this.maxMemory = properties.maxMemory().toBytes();
        this.ticking = Allocations.supported()
                ? timer.schedulePeriodically(this::tick, TICK.toMillis(), TICK.toMillis(), TimeUnit.MILLISECONDS)
                : () -> { };
        if (!Allocations.supported()) {
            log.warn("this JVM does not count allocations per thread: executions' memory is not watched");
        }
    }

    void watch(Execution execution) {
        live.add(execution);
    }

    void forget(Execution execution) {
        live.remove(execution);
    }

    private void tick() {
        try {
            live.removeIf(Execution::closed); // closed elsewhere: expired while paused, the daemon stopping
            double filled = filled();
            if (filled < PRESSURE || live.isEmpty()) {
                return;
            }
            List<Execution> heaviest = live.stream()
                    .sorted(Comparator.comparingLong((Execution execution) -> execution.allocations().total()).reversed())
                    .toList();
            Execution top = heaviest.get(0);
            long allocated = top.allocations().total();
            if (allocated <= maxMemory && filled < CRITICAL) {
                return;
            }
            long now = System.nanoTime();
            if (now - lastGc < MIN_GC_INTERVAL_NANOS) {
                return;
            }
            lastGc = now;
            System.gc(); // what is left is what code and the daemon hold
            filled = filled();
            if (filled < PRESSURE || allocated <= maxMemory && filled < CRITICAL) {
                return;
            }
            String reason = "the execution was stopped: it allocated " + (allocated >> 20) + " MB while the daemon's heap was "
                    + Math.round(filled * 100) + "% full (tether.execution.max-memory is " + (maxMemory >> 20) + " MB)";
            log.warn("{}", reason);
            live.remove(top);
            top.close(reason);
        }
        catch (RuntimeException ex) {
            log.warn("the memory watch failed a round: {}", ex.toString());
        }
    }

    /** How full the old generation is, 0 to 1; the whole heap where no pool is the old generation. */
    private double filled() {
        if (old != null && old.getUsage().getMax() > 0) {
            return (double) old.getUsage().getUsed() / old.getUsage().getMax();
        }
        Runtime runtime = Runtime.getRuntime();
        return (double) (runtime.totalMemory() - runtime.freeMemory()) / runtime.maxMemory();
    }

    private static MemoryPoolMXBean oldGeneration() {
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
