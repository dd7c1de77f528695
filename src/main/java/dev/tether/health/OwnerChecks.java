package dev.tether.health;

import java.util.Optional;

import reactor.core.publisher.Mono;

import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;

/**
 * Where a batch's health check goes when another replica on the same store owns the connection's warm session: to
 * that replica, which pings its session, stores the verdict and announces it, so that one child per connection runs
 * cluster-wide. Implemented where an HTTP client may live.
 */
public interface OwnerChecks {

    /** A replica alone: every check runs here. */
    OwnerChecks LOCAL = (connection, here) -> Optional.empty();

    /**
     * The owner's check of {@code connection} and its verdict, which the owner has stored; empty when this replica owns
     * the connection. Cancelling it cancels the owner's wait, not a probe others wait for. An owner that left before it
     * took the check (it is stopping) hands the connection over: the check goes to the new owner, or to {@code here},
     * the probe on this replica, when that is this one.
     */
    Optional<Mono<HealthVerdict>> atOwner(ConnectionKey connection, Mono<HealthVerdict> here);
}
