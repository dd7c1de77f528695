package dev.tether.store.storage;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.configuration.Configuration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationStrategy;
import org.springframework.stereotype.Component;

import dev.tether.store.secrets.SecretsAtRest;

/**
 * How a start brings the store to the newest schema. A store whose schema history already ends at the newest migration
 * ({@link #NEWEST}), with no failed one, is not handed to Flyway: its {@code migrate} would read every migration on the
 * class path, check each applied one against its file and take the history's lock, at every start, to find nothing to
 * do (a tenth of a second of a start's CPU and Flyway's classes). Only the check that must run at every start runs then
 * ({@link SecretsAtRest}). Any other store (fresh, behind, ahead of this build, or with a failed migration) goes to
 * Flyway as before, which migrates it or refuses it with its own message.
 */
@Component
final class StoreMigration implements FlywayMigrationStrategy {

    /**
     * The newest migration's version, in {@code src/main/resources/db/migration}; the store contract's
     * {@code theNewestMigrationIsTheOneAStartTakesForUpToDate} ({@code StoreContract}, on H2 and PostgreSQL) fails when a
     * migration is added without it.
     */
    static final MigrationVersion NEWEST = MigrationVersion.fromVersion("59");

    private final SecretsAtRest secretsAtRest;

    StoreMigration(SecretsAtRest secretsAtRest) {
        this.secretsAtRest = secretsAtRest;
    }

    @Override
    public void migrate(Flyway flyway) {
        Configuration configuration = flyway.getConfiguration();
        try (Connection jdbc = configuration.getDataSource().getConnection()) {
            if (NEWEST.equals(newestApplied(jdbc, configuration))) {
                secretsAtRest.check(jdbc);
                return;
            }
        }
        catch (SQLException ex) {
            throw new IllegalStateException("cannot open the store: " + ex.getMessage(), ex);
        }
        flyway.migrate();
    }

    /**
     * The newest version the schema history records, or none when it has no history, records a failed migration, or
     * cannot be read: each is Flyway's to handle.
     */
    static @Nullable MigrationVersion newestApplied(Connection jdbc, Configuration configuration) {
        String schema = configuration.getDefaultSchema() != null ? configuration.getDefaultSchema()
                : configuration.getSchemas().length > 0 ? configuration.getSchemas()[0] : null;
        String history = (schema == null ? "" : quoted(schema) + ".") + quoted(configuration.getTable());
        MigrationVersion newest = null;
        try (Statement statement = jdbc.createStatement();
                ResultSet rows = statement.executeQuery("SELECT " + quoted("version") + ", " + quoted("success") + " FROM " + history)) {
            while (rows.next()) {
                if (!rows.getBoolean(2)) {
                    return null;
                }
                String version = rows.getString(1);
                if (version != null) {
                    MigrationVersion applied = MigrationVersion.fromVersion(version);
                    newest = newest == null || applied.compareTo(newest) > 0 ? applied : newest;
                }
            }
            return newest;
        }
        catch (SQLException noHistory) {
            return null;
        }
    }

    private static String quoted(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }
}
