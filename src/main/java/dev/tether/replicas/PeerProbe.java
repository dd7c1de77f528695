package dev.tether.replicas;

import reactor.core.publisher.Mono;

import dev.tether.store.leases.InstanceLeases.Lease;

/**
 * Asks a replica whose lease ran out whether it is still there, at the address its lease names: implemented in
 * {@code api} over HTTP. Emits true only when it answered as itself; errors and silence are the caller's to bound.
 */
public interface PeerProbe {

    Mono<Boolean> answers(Lease lease);
}
