package dev.tether.store.storage;

import java.util.UUID;

/** The store held in memory over embedded H2 (one in-memory database shared by the test's replicas). */
class H2MemoryStoreTest extends MemoryStoreContract {

    @Override
    protected Database newDatabase() {
        String name = "memory-" + UUID.randomUUID();
        return new Database("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1", "r2dbc:h2:mem:///" + name + "?DB_CLOSE_DELAY=-1", "sa", "");
    }
}
