package dev.tether.api;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.tether.liveness.EngineProbe;

/**
 * The daemon's own liveness, open without a token as Executor's: {@code ok} when every part of the engine answered
 * its probe ({@link EngineProbe}), else a 503 that names the parts that did not.
 */
@RestController
final class DaemonHealthController {

    private final EngineProbe probe;

    DaemonHealthController(EngineProbe probe) {
        this.probe = probe;
    }

    @GetMapping(value = "/api/health", produces = MediaType.TEXT_PLAIN_VALUE)
    Mono<ResponseEntity<String>> health() {
        return probe.check().map(verdict -> verdict.ok() ? ResponseEntity.ok("ok")
                : ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("unhealthy: " + String.join("; ", verdict.problems())));
    }
}
