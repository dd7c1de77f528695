package dev.tether.api;

import java.util.List;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.tether.api.input.Bounds;
import dev.tether.providers.CredentialProviders;
import dev.tether.providers.ProviderItem;

/** Executor's credential providers: which there are, and what each one keeps, by id and label. */
@RestController
final class ProvidersController {

    private final CredentialProviders providers;

    ProvidersController(CredentialProviders providers) {
        this.providers = providers;
    }

    @GetMapping("/api/providers")
    Mono<List<String>> list() {
        return providers.keys().collectList();
    }

    @GetMapping("/api/providers/{key}/items")
    Mono<List<ProviderItem>> items(@PathVariable String key) {
        Bounds.check("key", key);
        return providers.items(key);
    }
}
