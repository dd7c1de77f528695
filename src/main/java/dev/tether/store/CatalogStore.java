package dev.tether.store;

import reactor.core.publisher.Mono;

/** The last good tool catalog of each connection. */
public interface CatalogStore {

    /** The stored catalog, or empty when the connection was never synced. */
    Mono<StoredCatalog> catalog(ConnectionKey key);

    Mono<Void> saveCatalog(ConnectionKey key, StoredCatalog catalog);

    /** One tool of the stored catalog, by the name in its address; empty when there is none. */
    default Mono<StoredTool> tool(ConnectionKey key, String name) {
        return catalog(key).flatMap(catalog -> Mono.justOrEmpty(catalog.tools().stream().filter(t -> t.name().equals(name)).findFirst()));
    }
}
