package dev.tether.api;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;

import dev.tether.api.Views.IntegrationView;
import dev.tether.store.IntegrationStore;

@RestController
final class IntegrationsController {

    private final IntegrationStore integrations;

    IntegrationsController(IntegrationStore integrations) {
        this.integrations = integrations;
    }

    @GetMapping("/api/integrations")
    Flux<IntegrationView> list() {
        return integrations.all().map(IntegrationView::of);
    }
}
