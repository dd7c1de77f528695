package dev.tether.store.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fresh store is made by one baseline script ({@code B52__baseline.sql}) instead of the migrations before it, then the
 * ones written after it; a store made by those migrations, or part of them, goes on with the versioned ones. Both must end in the same schema,
 * read from H2's information schema: tables, columns in order with their types, nullability and defaults, and every
 * key with its columns and delete rule.
 */
class StoreBaselineTest {

    @TempDir
    Path dir;

    @Test
    void anEmptyStoreRunsTheBaselineAloneAndEndsInTheSchemaOfEveryMigrationBeforeIt() throws Exception {
        String chained = database();
        Flyway.configure().dataSource(chained, "sa", "").locations("filesystem:" + versionedOnly()).load().migrate();

        String baselined = database();
        Flyway flyway = Flyway.configure().dataSource(baselined, "sa", "").load();
        flyway.migrate();

        List<String> applied = Arrays.stream(flyway.info().applied()).map(info -> info.getVersion() + " " + info.getDescription()).toList();
        assertThat(applied).as("what an empty store ran: the baseline, then only the migrations written after it")
                .containsExactlyElementsOf(java.util.stream.Stream.concat(Stream.of("52 baseline"),
                        versions().stream().filter(version -> Integer.parseInt(version.split(" ")[0]) > 52)).toList());
        assertThat(schema(baselined)).isEqualTo(schema(chained)).isNotEmpty();
    }

    @Test
    void aStoreMadeByEarlierMigrationsGoesOnWithTheVersionedOnesNotTheBaseline() throws Exception {
        String upgraded = database();
        Flyway.configure().dataSource(upgraded, "sa", "").locations("filesystem:" + versionedOnly()).target("30").load().migrate();
        Flyway flyway = Flyway.configure().dataSource(upgraded, "sa", "").load();
        flyway.migrate();

        assertThat(Arrays.stream(flyway.info().applied()).map(MigrationInfo::getState))
                .as("an upgraded store's history").doesNotContain(MigrationState.BASELINE);
        assertThat(flyway.info().current().getVersion().getVersion()).isEqualTo(versions().get(versions().size() - 1).split(" ")[0]);
        String chained = database();
        Flyway.configure().dataSource(chained, "sa", "").locations("filesystem:" + versionedOnly()).load().migrate();
        assertThat(schema(upgraded)).isEqualTo(schema(chained));
    }

    private String database() {
        return "jdbc:h2:mem:baseline-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
    }

    /** Every versioned migration as Flyway names it ({@code "53 store identity"}), oldest first. */
    private List<String> versions() throws IOException, URISyntaxException {
        try (Stream<Path> files = Files.list(Path.of(getClass().getResource("/db/migration").toURI()))) {
            return files.map(f -> f.getFileName().toString()).filter(name -> name.startsWith("V"))
                    .map(name -> name.substring(1, name.length() - ".sql".length()).replaceFirst("__", " ").replace('_', ' '))
                    .sorted(java.util.Comparator.comparingInt(version -> Integer.parseInt(version.split(" ")[0])))
                    .toList();
        }
    }

    /** The versioned SQL migrations alone, copied where Flyway finds no baseline beside them. */
    private Path versionedOnly() throws IOException, URISyntaxException {
        Path migrations = Path.of(getClass().getResource("/db/migration").toURI());
        Path copy = Files.createDirectories(dir.resolve("versioned"));
        try (Stream<Path> files = Files.list(migrations)) {
            for (Path file : files.filter(f -> f.getFileName().toString().startsWith("V")).toList()) {
                Files.copy(file, copy.resolve(file.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        return copy;
    }

    /** The schema as lines, sorted: columns, then keys by table, type and columns (their generated names aside). */
    private static List<String> schema(String url) throws SQLException {
        List<String> lines = new ArrayList<>();
        try (Connection connection = DriverManager.getConnection(url, "sa", "")) {
            read(connection, """
                    SELECT TABLE_NAME, ORDINAL_POSITION, COLUMN_NAME, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, IS_NULLABLE,
                           COLUMN_DEFAULT, IS_IDENTITY
                    FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = 'PUBLIC' AND TABLE_NAME <> 'flyway_schema_history'
                    """, lines);
            read(connection, """
                    SELECT tc.TABLE_NAME, tc.CONSTRAINT_TYPE,
                           LISTAGG(k.COLUMN_NAME, ',') WITHIN GROUP (ORDER BY k.ORDINAL_POSITION),
                           COALESCE(rc.DELETE_RULE, ''),
                           COALESCE((SELECT MIN(u.TABLE_NAME) FROM INFORMATION_SCHEMA.KEY_COLUMN_USAGE u
                                     WHERE u.CONSTRAINT_NAME = rc.UNIQUE_CONSTRAINT_NAME), '')
                    FROM INFORMATION_SCHEMA.TABLE_CONSTRAINTS tc
                    JOIN INFORMATION_SCHEMA.KEY_COLUMN_USAGE k ON k.CONSTRAINT_NAME = tc.CONSTRAINT_NAME
                    LEFT JOIN INFORMATION_SCHEMA.REFERENTIAL_CONSTRAINTS rc ON rc.CONSTRAINT_NAME = tc.CONSTRAINT_NAME
                    WHERE tc.TABLE_SCHEMA = 'PUBLIC' AND tc.TABLE_NAME <> 'flyway_schema_history'
                    GROUP BY tc.CONSTRAINT_NAME, tc.TABLE_NAME, tc.CONSTRAINT_TYPE, rc.DELETE_RULE, rc.UNIQUE_CONSTRAINT_NAME
                    """, lines);
        }
        lines.sort(null);
        return lines;
    }

    private static void read(Connection connection, String query, List<String> lines) throws SQLException {
        try (ResultSet rows = connection.createStatement().executeQuery(query)) {
            int columns = rows.getMetaData().getColumnCount();
            while (rows.next()) {
                StringBuilder line = new StringBuilder();
                for (int c = 1; c <= columns; c++) {
                    line.append(c == 1 ? "" : " | ").append(rows.getString(c));
                }
                lines.add(line.toString());
            }
        }
    }
}
