package dev.tether.store.storage;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

import dev.tether.daemon.Periodic;
import dev.tether.store.StoreProperties;
import dev.tether.store.changes.ChangeSignals;
import dev.tether.store.changes.StorePosition;
import dev.tether.store.changes.StoreChanges;

/**
 * The in-memory store's timers: loading it before the server takes requests, writing health verdicts behind every
 * {@code tether.store.write-behind}, reading the change log for what other replicas wrote (on PostgreSQL as each
 * change is announced, elsewhere every {@code tether.store.change-poll}), and a last bounded flush at a graceful stop.
 */
@Component
final class StoreUpkeep implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(StoreUpkeep.class);
    private static final Duration CHANGE_LOG_KEPT = Duration.ofHours(1);

    private final MemoryStore memory;
    private final StoreChanges changes;
    private final ChangeSignals signals;
    private final StorePosition position;
    private final StoreProperties properties;
    private final Scheduler timer;
    private final Periodic writeBehind = new Periodic();
    private final Periodic changeLog = new Periodic();
    private final AtomicBoolean started = new AtomicBoolean();
    private volatile @Nullable Disposable loading;
    private volatile @Nullable Disposable listening;

    @Autowired
    StoreUpkeep(MemoryStore memory, StoreChanges changes, ChangeSignals signals, StorePosition position, StoreProperties properties) {
        this(memory, changes, signals, position, properties, Schedulers.parallel());
    }

    StoreUpkeep(MemoryStore memory, StoreChanges changes, ChangeSignals signals, StorePosition position, StoreProperties properties,
            Scheduler timer) {
        this.memory = memory;
        this.changes = changes;
        this.signals = signals;
        this.position = position;
        this.properties = properties;
        this.timer = timer;
    }

    @Override
    public void start() {
        if (!started.compareAndSet(false, true)) {
            return;
        }
        loading = memory.loaded().doOnSuccess(loaded -> position.caughtUp())
                .subscribe(null, error -> log.warn("store not loaded yet: {}", error.toString()));
        writeBehind.start(properties.writeBehind(), properties.writeBehind(), timer, memory::flush,
                error -> log.warn("health verdicts not written yet, retrying: {}", error.toString()));
        if (!changes.shared()) {
            return; // nobody else writes this store: no change log to read
        }
        if (signals.available()) {
            listening = listen().subscribe();
            return;
        }
        changeLog.start(properties.changePoll(), properties.changePoll(), timer,
                this::catchUp,
                error -> log.warn("cannot read the store's change log: {}", error.toString()));
    }

    /**
     * Reads the log at each announcement and each request that waits for it ({@link StorePosition#awaitApplied}), one
     * read for any number of those meanwhile, and once listening begins, for what was written while nobody listened.
     * The reads never overlap, so a read that is over has applied all it read. A lost connection is listened to again
     * after {@code change-poll}, a pause that grows to 30 times that while the database stays out of reach.
     */
    private Flux<Void> listen() {
        Duration first = properties.changePoll();
        return Flux.merge(signals.wakeups(), position.asked())
                .onBackpressureLatest()
                .concatMap(wakeup -> catchUp(), 1)
                .retryWhen(Retry.backoff(Long.MAX_VALUE, first).maxBackoff(first.multipliedBy(30)).transientErrors(true).scheduler(timer)
                        .doBeforeRetry(lost -> log.warn("lost the store's change announcements, listening again: {}",
                                lost.failure().toString())));
    }

    private Mono<Void> catchUp() {
        return memory.catchUp().then(Mono.fromRunnable(position::caughtUp)).then(changes.prune(CHANGE_LOG_KEPT));
    }

    /** Flushes the pending verdicts, bounded by {@code tether.store.flush-timeout}, before the database closes. */
    @Override
    public void stop(Runnable callback) {
        Disposable load = loading;
        if (load != null) {
            load.dispose();
        }
        Disposable listen = listening;
        if (listen != null) {
            listen.dispose();
        }
        writeBehind.stop();
        changeLog.stop();
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
        return writeBehind.isRunning();
    }

    /** Stops after the health checks (phase 10), before the children (phase 0), so their last verdicts are flushed. */
    @Override
    public int getPhase() {
        return 5;
    }
}
