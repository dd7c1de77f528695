package dev.tether.replicas;

/**
 * Published (a Spring application event) after every read of the live leases, and when this replica begins to leave:
 * connections may have changed owner. Whoever keeps something per connection that only its owner should keep, a warm
 * session, looks again each time, not only when the leases changed: a request that chose its replica before a read
 * may still start a session after it (a handover in flight), and nothing else would tell that session it is not wanted
 * here.
 */
public record OwnersRead(String instance) {
}
