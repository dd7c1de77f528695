package dev.tether.api;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresPostgres;

/**
 * A {@code 2xx} means the write is kept on PostgreSQL: the packaged daemon killed with SIGKILL mid-burst, four rounds
 * on one schema, loses no write it had answered ({@link AcknowledgedWrites}). The same on H2: {@link AcknowledgedWritesIT}.
 */
class AcknowledgedWritesOnPostgresIT {

    @TempDir
    Path dataDir;

    @Test
    @RequiresPostgres
    void postgresStoreKeepsEveryAcknowledgedWriteThroughKills() throws Exception {
        PostgresDatabase database = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = database.createSchema("kill");
        try (AcknowledgedWrites writes = new AcknowledgedWrites(dataDir)) {
            writes.keepsEveryAcknowledgedWrite(database.daemonEnvironment(schema));
        }
    }
}
