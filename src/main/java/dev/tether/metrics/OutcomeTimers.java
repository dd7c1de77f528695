package dev.tether.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * One timer name tagged by outcome ({@code ok}, {@code failed}, {@code cancelled}…), each built once and kept:
 * a warm request stops a timer and should not pay for a registry lookup to find it.
 */
public final class OutcomeTimers {

    private final String name;
    private final String description;
    private final MeterRegistry registry;
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();

    public OutcomeTimers(String name, String description, MeterRegistry registry) {
        this.name = name;
        this.description = description;
        this.registry = registry;
    }

    /** Starts timing something whose outcome is known only at its end. */
    public Timer.Sample start() {
        return Timer.start(registry);
    }

    /** The timer of one outcome. */
    public Timer timer(String outcome) {
        return timers.computeIfAbsent(outcome, o -> Timer.builder(name).tag("outcome", o).description(description).register(registry));
    }
}
