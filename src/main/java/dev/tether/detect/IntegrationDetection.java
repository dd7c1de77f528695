package dev.tether.detect;

import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Which plugins recognise a URL: every {@link IntegrationDetector} asked in order, one after the other, and the
 * results of those that did, as Executor's {@code integrations.detect} answers. A detector that fails counts as one
 * that did not recognise it.
 */
@Component
public final class IntegrationDetection {

    private final ObjectProvider<IntegrationDetector> detectors;

    IntegrationDetection(ObjectProvider<IntegrationDetector> detectors) {
        this.detectors = detectors;
    }

    public Mono<List<Detection>> detect(String url) {
        String trimmed = url.trim();
        if (trimmed.isEmpty()) {
            return Mono.just(List.of());
        }
        return Flux.fromStream(detectors::orderedStream)
                .concatMap(detector -> detector.detect(trimmed).onErrorResume(error -> Mono.empty()))
                .collectList();
    }
}
