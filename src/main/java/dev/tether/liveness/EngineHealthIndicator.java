package dev.tether.liveness;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/** Actuator's {@code engine} component, part of the liveness group: down when a part of the engine does not answer. */
@Component("engine")
final class EngineHealthIndicator implements ReactiveHealthIndicator {

    private final EngineProbe probe;

    EngineHealthIndicator(EngineProbe probe) {
        this.probe = probe;
    }

    @Override
    public Mono<Health> health() {
        return probe.check().map(verdict -> verdict.ok() ? Health.up().build()
                : Health.down().withDetail("problems", verdict.problems()).build());
    }
}
