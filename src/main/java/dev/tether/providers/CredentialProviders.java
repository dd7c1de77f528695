package dev.tether.providers;

import java.util.List;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.store.CredentialStore;
import dev.tether.store.CredentialStore.CredentialName;

/**
 * Where connections' credential values live, as Executor 1.5.9's providers: {@code file} and {@code onepassword}.
 * Tether's sealed credential store plays Executor's {@code file} provider ({@link #DEFAULT}), the one every connection
 * names; its items are the kept values, listed by id and label only: a value never leaves the store through here.
 * {@code onepassword} is listed as Executor lists it, with no items: Executor lists none without the {@code op} CLI,
 * and Tether's 1Password support configures the account and lists its vaults, not their items.
 */
@Component
public final class CredentialProviders {

    /** The key of Tether's own store, as connections name their provider: Executor's name for its writable store. */
    public static final String DEFAULT = "file";

    /** The providers' keys in Executor's order. */
    private static final List<String> KEYS = List.of(DEFAULT, "onepassword");

    private final CredentialStore credentials;

    public CredentialProviders(CredentialStore credentials) {
        this.credentials = credentials;
    }

    /** The registered providers' keys, the default writable one first. */
    public Flux<String> keys() {
        return Flux.fromIterable(KEYS);
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
