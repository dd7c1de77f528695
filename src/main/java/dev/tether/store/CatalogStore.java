package dev.tether.store;

import reactor.core.publisher.Mono;

/** The last good tool catalog of each connection. */
public interface CatalogStore {

    /** The stored catalog, or empty when the connection was never synced. */
    Mono<StoredCatalog> catalog(ConnectionKey key);

    Mono<Void> saveCatalog(ConnectionKey key, StoredCatalog catalog);

    /**
     * The catalog as the database holds it now, and as this replica holds it from now on: what another replica has
     * just stored, before its announcement of the change arrives. A store that reads the database every time has
     * nothing to do.
     */
    default Mono<StoredCatalog> reload(ConnectionKey key) {
        return catalog(key);
    }

    /** One tool of the stored catalog, by the name in its address; empty when there is none. */
    default Mono<StoredTool> tool(ConnectionKey key, String name) {
        return catalog(key).flatMap(catalog -> Mono.justOrEmpty(catalog.tools().stream().filter(t -> t.name().equals(name)).findFirst()));
    }
}
