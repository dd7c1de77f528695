package dev.tether.tracing;

import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import reactor.core.publisher.Mono;

/**
 * One observation (a span, when tracing records; a timer too) around a {@link Mono}, a child of the observation in
 * the subscriber's Reactor context (where WebFlux puts the HTTP request's, and these put their own): so a span started
 * deep in a pipeline lands under the request that caused it, on whichever thread the work runs. The span ends with the
 * Mono: completed, failed (the error recorded) or cancelled (tagged {@code cancelled}, as a client that leaves ends it).
 * Only what identifies one request or resource goes in {@code details} (high cardinality: spans only, no meter).
 */
public final class Spans {

    private Spans() {
    }

    /** {@code work} inside an observation named {@code name}; nothing is added when {@code registry} is a no-op one. */
    public static <T> Mono<T> around(ObservationRegistry registry, String name, KeyValues details, Mono<T> work) {
        if (registry.isNoop()) {
            return work;
        }
        return Mono.deferContextual(context -> {
            Observation observation = Observation.createNotStarted(name, registry)
                    .parentObservation(context.getOrDefault(ObservationThreadLocalAccessor.KEY, null))
                    .highCardinalityKeyValues(details)
                    .start();
            return work
                    .doOnError(observation::error)
                    .doOnCancel(() -> observation.highCardinalityKeyValue("cancelled", "true"))
                    .doFinally(signal -> observation.stop())
                    .contextWrite(inner -> inner.put(ObservationThreadLocalAccessor.KEY, observation));
        });
    }
}
