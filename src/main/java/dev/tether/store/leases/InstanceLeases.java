package dev.tether.store.leases;

import java.time.Instant;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The replicas sharing this store, each by a lease it renews; an expired lease is a replica that died. */
public interface InstanceLeases {

    /**
     * One replica's lease as stored; a {@code draining} replica is stopping: alive (its lease runs, nobody reaps it),
     * but no longer a connection's owner; a {@code claimed} one was taken for dead by a peer, which removes what it left.
     */
    record Lease(String instance, String address, Instant startedAt, Instant expiresAt, boolean draining, boolean claimed) {

        public Lease(String instance, String address, Instant startedAt, Instant expiresAt, boolean draining) {
            this(instance, address, startedAt, expiresAt, draining, false);
        }

        public Lease(String instance, String address, Instant startedAt, Instant expiresAt) {
            this(instance, address, startedAt, expiresAt, false, false);
        }
    }

    /**
     * The store's identity: one random value made when the store was first migrated, the same for every replica that
     * shares it, and another for any other store.
     */
    Mono<String> storeIdentity();

    /**
     * Extends this replica's lease to {@code lease}'s end; false when there is none to extend: never written, given back,
     * or taken by a peer that took this replica for dead (claimed or reaped).
     */
    Mono<Boolean> extend(Lease lease);

    /** Writes this replica's lease anew, whatever the store held of it (a peer's claim, a tombstone): it is back. */
    Mono<Void> writeAnew(Lease lease);

    /** Extends this replica's lease, or writes it anew; false when it had to be written anew. */
    default Mono<Boolean> renew(Lease lease) {
        return extend(lease).flatMap(extended -> extended ? Mono.just(true) : writeAnew(lease).thenReturn(false));
    }

    /** Marks this replica's lease draining, the first step of a graceful stop; renewals keep the mark. */
    Mono<Void> drain(String instance);

    /** Removes this replica's lease at a graceful stop, so that peers need not wait for it to run out. */
    Mono<Void> release(String instance);

    /**
     * The leases no peer has taken for dead: of the replicas alive (this one's included once it has renewed), and of
     * those whose lease ran out that no peer has confirmed dead yet (they may only be slow). Only a peer's claim, made
     * once the replica did not answer at its address, moves a replica's connections.
     */
    Flux<Lease> standing();

    /** Leases that ran out before {@code now}, oldest first, claimed or not; not those reaped already (tombstones). */
    Flux<Lease> expired(Instant now);

    /** A reaped replica's row, kept until {@code until} so that peers go on removing what it left, created late. */
    record Tombstone(String instance, Instant until) {
    }

    /**
     * Marks an expired lease as {@code claimer}'s to clean up until {@code until}, exactly once across replicas: true
     * only for the one whose update marked the row, while it is still expired (a replica that came back and renewed
     * keeps it) and nobody else's claim on it is running; the claimer may take its own claim again to retry.
     */
    Mono<Boolean> claim(Lease lease, String claimer, Instant now, Instant until);

    /**
     * Gives up {@code claimer}'s claim after a failed cleanup, so that any live peer may take it at once; the replica
     * stays taken for dead.
     */
    Mono<Void> unclaim(String instance, String claimer);

    /**
     * Marks a lease {@code claimer} claimed as reaped, once what its replica left is gone: a tombstone until {@code until}
     * ({@link #tombstones}); false if the claim was lost. A replica that comes back under the same id renews its lease
     * anew, which ends the tombstone.
     */
    Mono<Boolean> reaped(String instance, String claimer, Instant until);

    /** The tombstones of reaped replicas, those past their end included. */
    Flux<Tombstone> tombstones();

    /** Removes {@code instance}'s tombstone if it ended before {@code now}. */
    Mono<Void> bury(String instance, Instant now);

    /**
     * Whether {@code instance} is taken for dead in the store: its lease claimed by a peer or reaped. False once it has
     * renewed its lease anew (it came back), or has none.
     */
    Mono<Boolean> takenForDead(String instance);
}
