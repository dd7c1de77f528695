package dev.tether.store;

import reactor.core.publisher.Mono;

/** The last good tool catalog of each connection. */
public interface CatalogStore {

    /** The stored catalog, or empty when the connection was never synced. */
    Mono<StoredCatalog> catalog(ConnectionKey key);

    Mono<Void> saveCatalog(ConnectionKey key, StoredCatalog catalog);
}
