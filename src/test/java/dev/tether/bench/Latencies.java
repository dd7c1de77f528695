package dev.tether.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;

/** Latencies in microseconds, sorted, read as percentiles in milliseconds. */
record Latencies(List<Long> micros) {

    static Latencies of(Collection<Long> micros) {
        List<Long> sorted = new ArrayList<>(micros);
        Collections.sort(sorted);
        return new Latencies(sorted);
    }

    double p50() {
        return micros.get(micros.size() / 2) / 1000.0;
    }

    double p90() {
        return percentile(90);
    }

    double p99() {
        return percentile(99);
    }

    /** The smallest latency that {@code percent} % of the samples do not exceed. */
    double percentile(int percent) {
        return micros.get(Math.max(0, (int) Math.ceil(micros.size() * percent / 100.0) - 1)) / 1000.0;
    }
}
