package dev.tether.store.storage;

import java.sql.Connection;
import java.sql.Statement;

import org.flywaydb.core.api.migration.BaseJavaMigration;
import org.flywaydb.core.api.migration.Context;
import org.springframework.stereotype.Component;

/**
 * On the embedded store, lets the audit table's sequence hand out {@value #CACHE} numbers between two writes of the
 * store's file instead of H2's default 32. H2 writes its whole file store each time a sequence passes the numbers it
 * has saved, and with {@code WRITE_DELAY=0} that write is immediate: the trail's every 32nd event cost a file write of
 * its own, half of the inserts' CPU at a thousand calls a second. A larger cache costs nothing but a gap in the numbers
 * after a {@code kill -9}, which the trail's paging ({@code before} a number) does not mind.
 *
 * <p>Not on PostgreSQL: there each connection caches numbers of its own, so two connections of the pool would number
 * events out of the order they were written in, and the trail reads newest first by number.
 */
@Component
final class V59__AuditSequenceCache extends BaseJavaMigration {

    static final int CACHE = 10_000;

    @Override
    public void migrate(Context context) throws Exception {
        Connection jdbc = context.getConnection();
        if (!jdbc.getMetaData().getDatabaseProductName().equals("H2")) {
            return;
        }
        try (Statement statement = jdbc.createStatement()) {
            statement.execute("ALTER TABLE audit_event ALTER COLUMN seq SET CACHE " + CACHE);
        }
    }
}
