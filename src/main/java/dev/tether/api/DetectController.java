package dev.tether.api;

import java.util.List;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.tether.api.input.Bounds;
import dev.tether.api.input.InvalidInputException;
import dev.tether.detect.Detection;
import dev.tether.detect.IntegrationDetection;

/** Which plugin recognises a URL, so that the UI can pre-fill the right onboarding form. */
@RestController
final class DetectController {

    public record DetectRequest(String url) {
    }

    private final IntegrationDetection detection;

    DetectController(IntegrationDetection detection) {
        this.detection = detection;
    }

    @PostMapping("/api/integrations/detect")
    Mono<List<Detection>> detect(@RequestBody DetectRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> {
                    if (request.url() == null) {
                        throw InvalidInputException.decode("`url` is required");
                    }
                    return request.url();
                })
                .flatMap(detection::detect);
    }
}
