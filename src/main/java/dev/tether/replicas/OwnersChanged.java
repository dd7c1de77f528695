package dev.tether.replicas;

/**
 * Published (a Spring application event) when connections may have changed owner: a read of the live leases found
 * them changed (a replica came, drained or went), or this replica began to leave. Whoever keeps something per
 * connection that only its owner should keep, a warm session, looks again.
 */
public record OwnersChanged(String instance) {
}
