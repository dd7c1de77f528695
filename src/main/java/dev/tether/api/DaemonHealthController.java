package dev.tether.api;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** The daemon's own liveness, open without a token as Executor's. */
@RestController
final class DaemonHealthController {

    @GetMapping(value = "/api/health", produces = MediaType.TEXT_PLAIN_VALUE)
    Mono<String> health() {
        return Mono.just("ok");
    }
}
