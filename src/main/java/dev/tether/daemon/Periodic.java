package dev.tether.daemon;

import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A task a lifecycle runs every so often until it stops: one run at a time (a tick that comes while a run is still
 * going is dropped, not queued), and a failed run is reported and leaves the schedule going.
 */
public final class Periodic {

    private volatile @Nullable Disposable running;

    /**
     * Runs {@code task} after {@code first}, then every {@code period} on {@code clock}; a start while running does
     * nothing, a start after a stop begins again.
     */
    public synchronized void start(Duration first, Duration period, Scheduler clock, Supplier<Mono<?>> task,
            Consumer<Throwable> failed) {
        if (isRunning()) {
            return;
        }
        running = Flux.interval(first, period, clock)
                .onBackpressureDrop()
                .concatMap(tick -> Mono.defer(task).onErrorResume(error -> {
                    failed.accept(error);
                    return Mono.empty();
                }), 1)
                .subscribe();
    }

    public void stop() {
        Disposable schedule = running;
        if (schedule != null) {
            schedule.dispose();
        }
    }

    public boolean isRunning() {
        Disposable schedule = running;
        return schedule != null && !schedule.isDisposed();
    }
}
