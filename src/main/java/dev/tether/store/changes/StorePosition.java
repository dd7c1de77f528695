package dev.tether.store.changes;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * How far this replica has followed the store's change log, so that a request one replica passes to another is
 * served only once the receiver knows what the sender knew: a connection registered through A and refreshed through A
 * at once, when B owns it, reaches B as a request about a connection B has read, not a 404. The sender states its
 * {@link #reached() position}; the receiver {@linkplain #awaitApplied waits} until it has applied the log that far,
 * which normally it has already (each change is announced), and otherwise reads the log at once.
 */
@Component
public final class StorePosition {

    /**
     * How long a request waits for the log: the sender's change was committed before it sent the request, so one read
     * finds it; a store that cannot be read within this is unwell, and the request is served with what is known.
     */
    static final Duration WAIT_BOUND = Duration.ofSeconds(5);

    private final StoreChanges changes;
    private final AtomicLong applied = new AtomicLong();
    private final Sinks.Many<Long> appliedChanges = Sinks.many().replay().latest();
    private final Sinks.Many<Long> asked = Sinks.many().multicast().directBestEffort();

    StorePosition(StoreChanges changes) {
        this.changes = changes;
    }

    /** The newest change this replica has read or written: what a peer it passes a request to must have applied. */
    public long reached() {
        return changes.position();
    }

    /**
     * Completes once this replica has applied the change log through {@code position}, asking for a read of the log
     * now if it has not; after {@link #WAIT_BOUND} it completes anyway.
     */
    public Mono<Void> awaitApplied(long position) {
        if (applied.get() >= position) {
            return Mono.empty();
        }
        return appliedChanges.asFlux()
                .filter(through -> through >= position)
                .next()
                .doOnSubscribe(subscribed -> asked.emitNext(position, Sinks.EmitFailureHandler.busyLooping(Duration.ofMillis(50))))
                .timeout(WAIT_BOUND, Mono.empty())
                .then();
    }

    /** Reads of the log asked for by requests waiting on it. */
    public Flux<Long> asked() {
        return asked.asFlux();
    }

    /** Called after each read of the log has been applied (and after the load): the store is current that far. */
    public void caughtUp() {
        long through = applied.accumulateAndGet(changes.read(), Math::max);
        appliedChanges.emitNext(through, Sinks.EmitFailureHandler.busyLooping(Duration.ofMillis(50)));
    }
}
