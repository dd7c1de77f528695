package dev.tether.store;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Registered integrations. */
public interface IntegrationStore {

    /**
     * Saves a new integration, with no connection: as in Executor, connections are made apart. Fails with
     * {@link IntegrationAlreadyExistsException} when the slug is taken.
     */
    Mono<Integration> create(Integration integration);

    /** Replaces an existing integration; empty when there is none with that slug. */
    Mono<Integration> update(Integration integration);

    Mono<Integration> find(String slug);

    Flux<Integration> all();

    /** Removes the integration with its connections, credentials and catalogs; emits whether it existed. */
    Mono<Boolean> delete(String slug);
}
