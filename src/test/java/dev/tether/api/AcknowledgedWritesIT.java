package dev.tether.api;

import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code 2xx} means the write is kept on the embedded H2 store: the packaged daemon killed with SIGKILL mid-burst,
 * four rounds on one data dir, loses no write it had answered ({@link AcknowledgedWrites}; issue 18 was H2's default
 * commit delay losing a third of them). The same on PostgreSQL: {@link AcknowledgedWritesOnPostgresIT}.
 */
class AcknowledgedWritesIT {

    @TempDir
    Path dataDir;

    @Test
    void embeddedStoreKeepsEveryAcknowledgedWriteThroughKills() throws Exception {
        try (AcknowledgedWrites writes = new AcknowledgedWrites(dataDir)) {
            writes.keepsEveryAcknowledgedWrite(Map.of());
        }
    }
}
