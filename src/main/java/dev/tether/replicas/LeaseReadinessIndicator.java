package dev.tether.replicas;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.stereotype.Component;

/**
 * Actuator's {@code lease} component, part of the readiness group: down while this replica holds no live lease
 * on a shared store (before its first renewal, when the store cannot be reached for longer than the lease, and from
 * a graceful stop on), so that Kubernetes sends it no new work that a peer may tear down.
 */
@Component("lease")
final class LeaseReadinessIndicator implements HealthIndicator {

    private final ReplicaLease lease;

    LeaseReadinessIndicator(ReplicaLease lease) {
        this.lease = lease;
    }

    @Override
    public Health health() {
        return lease.holds() ? Health.up().build()
                : Health.down().withDetail("reason", "no live lease on the shared store").build();
    }
}
