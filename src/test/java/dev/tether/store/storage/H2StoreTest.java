package dev.tether.store.storage;

import java.nio.file.Path;

import org.junit.jupiter.api.io.TempDir;

/** The store contract on the embedded default: H2 in a file, as in the data dir. */
class H2StoreTest extends StoreContract {

    @TempDir
    Path dataDir;

    private int databases;

    @Override
    protected Database newDatabase() {
        Path file = dataDir.resolve("store" + (databases++)).resolve("tether");
        return new Database("jdbc:h2:file:" + file, "r2dbc:h2:file:///" + file, "sa", "");
    }
}
