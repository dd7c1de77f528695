package dev.tether.store;

/**
 * The in-memory store, for tests that wire services by hand: one instance behind every store interface, as
 * Spring wires it.
 */
public final class TestStores {

    /** The four views of one in-memory store. */
    public record Stores(IntegrationStore integrations, ConnectionStore connections, CredentialStore credentials,
            CatalogStore catalogs) {
    }

    private TestStores() {
    }

    public static Stores inMemory() {
        InMemoryStore store = new InMemoryStore();
        return new Stores(store, store, store, store);
    }
}
