package dev.tether.process;

import java.util.Collection;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/** The meters an operator watches to see that nothing leaks: live children, spawns, teardowns by rung. */
final class ChildMeters {

    private final MeterRegistry registry;

    ChildMeters(MeterRegistry registry, Collection<ChildProcess> live) {
        this.registry = registry;
        for (String kind : new String[] { "process", "docker" }) {
            Gauge.builder("tether.children.live", live, children -> children.stream().filter(c -> kind(c).equals(kind)).count())
                    .tag("kind", kind)
                    .description("stdio children alive now")
                    .register(registry);
        }
    }

    void spawned(ChildProcess child) {
        Counter.builder("tether.children.spawned").tag("kind", kind(child))
                .description("stdio children started").register(registry).increment();
    }

    void tornDown(TeardownReport report) {
        rung(report.rung().tag());
        if (report.containerRemoved()) {
            rung("container");
        }
    }

    private void rung(String rung) {
        Counter.builder("tether.children.teardown").tag("rung", rung)
                .description("teardowns by the last rung they needed").register(registry).increment();
    }

    private static String kind(ChildProcess child) {
        return child.containerName().isPresent() ? "docker" : "process";
    }
}
