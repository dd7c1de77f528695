package dev.tether.providers;

import java.util.List;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.store.CredentialStore;
import dev.tether.store.CredentialStore.CredentialName;

/**
 * Where connections' credential values live, as Executor's providers: Tether has one, its sealed credential store
 * ({@link #DEFAULT}), the provider every connection names. Its items are the kept values, listed by id and label
 * only: a value never leaves the store through here.
 */
@Component
public final class CredentialProviders {

    /** The key of Tether's own store, as connections name their provider. */
    public static final String DEFAULT = "executor";

    private final CredentialStore credentials;

    public CredentialProviders(CredentialStore credentials) {
        this.credentials = credentials;
    }

    /** The registered providers' keys, the default writable one first. */
    public Flux<String> keys() {
        return Flux.just(DEFAULT);
    }

    /**
     * The items of the provider with this key, in key order; none for a key no provider has (as Executor answers an
     * unknown key).
     */
    public Mono<List<ProviderItem>> items(String key) {
        if (!DEFAULT.equals(key)) {
            return Mono.just(List.of());
        }
        return credentials.names().map(CredentialProviders::item).collectList();
    }

    /** Executor's id of a connection's kept value, which is also its label: {@code connection:<owner>:<integration>:<name>:<variable>}. */
    private static ProviderItem item(CredentialName kept) {
        String id = "connection:" + kept.connection().owner().wire() + ":" + kept.connection().integration() + ":"
                + kept.connection().name() + ":" + kept.name();
        return new ProviderItem(id, id);
    }
}
