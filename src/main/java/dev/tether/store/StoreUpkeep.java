package dev.tether.store;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The in-memory store's timers: loading it before the server takes requests, writing health verdicts behind every
 * {@code tether.store.write-behind}, reading the change log every {@code tether.store.change-poll} for what other
 * replicas wrote, and a last bounded flush at a graceful stop.
 */
@Component
final class StoreUpkeep implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(StoreUpkeep.class);
    private static final Duration CHANGE_LOG_KEPT = Duration.ofHours(1);

    private final MemoryStore memory;
    private final StoreChanges changes;
    private final StoreProperties properties;
    private final Scheduler timer;
    private final Disposable.Composite running = Disposables.composite();
    private final AtomicBoolean started = new AtomicBoolean();

    @Autowired
    StoreUpkeep(MemoryStore memory, StoreChanges changes, StoreProperties properties) {
        this(memory, changes, properties, Schedulers.parallel());
    }

    StoreUpkeep(MemoryStore memory, StoreChanges changes, StoreProperties properties, Scheduler timer) {
        this.memory = memory;
        this.changes = changes;
        this.properties = properties;
        this.timer = timer;
    }

    @Override
    public void start() {
        if (!started.compareAndSet(false, true)) {
            return;
        }
        running.add(memory.loaded().subscribe(null, error -> log.warn("store not loaded yet: {}", error.toString())));
        running.add(Flux.interval(properties.writeBehind(), timer)
                .onBackpressureDrop()
                .concatMap(tick -> memory.flush().onErrorResume(error -> {
                    log.warn("health verdicts not written yet, retrying: {}", error.toString());
                    return Mono.empty();
                }), 1)
                .subscribe());
        running.add(Flux.interval(properties.changePoll(), timer)
                .onBackpressureDrop()
                .concatMap(tick -> memory.catchUp().then(changes.prune(CHANGE_LOG_KEPT)).onErrorResume(error -> {
                    log.warn("cannot read the store's change log: {}", error.toString());
                    return Mono.empty();
                }), 1)
                .subscribe());
    }

    /** Flushes the pending verdicts, bounded by {@code tether.store.flush-timeout}, before the database closes. */
    @Override
    public void stop(Runnable callback) {
        running.dispose();
        memory.flush().timeout(properties.flushTimeout())
                .doFinally(signal -> callback.run())
                .subscribe(null, error -> log.warn("{} health verdict(s) not written at shutdown: {}", memory.pendingVerdicts(),
                        error.toString()));
    }

    @Override
    public void stop() {
        stop(() -> { });
    }

    @Override
    public boolean isRunning() {
        return started.get() && !running.isDisposed();
    }

    /** Stops after the health checks (phase 10), before the children (phase 0), so their last verdicts are flushed. */
    @Override
    public int getPhase() {
        return 5;
    }
}
