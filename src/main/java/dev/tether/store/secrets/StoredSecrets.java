package dev.tether.store.secrets;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.identity.Principal;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;

/**
 * Every secret value in the store, walked over JDBC (Flyway's connection, before the R2DBC side is used): the
 * values of each server config's secret maps and every credential, each with its {@link SecretSlot}. A visitor may
 * give a new stored value for one; those are written back, the rest of each row as it was.
 */
final class StoredSecrets {

    private static final TypeReference<LinkedHashMap<String, Object>> MAP = new TypeReference<>() { };

    private final JsonMapper json;

    StoredSecrets(JsonMapper json) {
        this.json = json;
    }

    /**
     * Calls {@code visit} with each stored secret (its slot and its stored text) and writes back what it answers
     * where that differs from what is stored.
     *
     * @return how many values were written back
     */
    int rewrite(Connection jdbc, BiFunction<SecretSlot, String, String> visit) throws SQLException {
        return rewriteConfigs(jdbc, visit) + rewriteCredentials(jdbc, visit) + rewritePluginSettings(jdbc, visit)
                + rewriteOauthClients(jdbc, visit) + rewriteRefreshTokens(jdbc, visit);
    }

    @SuppressWarnings("unchecked")
    private int rewriteConfigs(Connection jdbc, BiFunction<SecretSlot, String, String> visit) throws SQLException {
        Map<String, String> rows = new LinkedHashMap<>();
        int values = 0;
        try (PreparedStatement select = jdbc.prepareStatement("SELECT slug, config FROM integration");
                ResultSet result = select.executeQuery()) {
            while (result.next()) {
                String slug = result.getString("slug");
                LinkedHashMap<String, Object> config = json.readValue(result.getString("config"), MAP);
                int changed = 0;
                for (String map : SecretSlot.CONFIG_MAPS) {
                    if (config.get(map) instanceof Map<?, ?> secrets) {
                        for (Map.Entry<String, Object> entry : ((Map<String, Object>) secrets).entrySet()) {
                            if (entry.getValue() instanceof String stored) {
                                String next = visit.apply(SecretSlot.config(slug, map, entry.getKey()), stored);
                                if (!next.equals(stored)) {
                                    entry.setValue(next);
                                    changed++;
                                }
                            }
                        }
                    }
                }
                if (changed > 0) {
                    rows.put(slug, json.writeValueAsString(config));
                    values += changed;
                }
            }
        }
        try (PreparedStatement update = jdbc.prepareStatement("UPDATE integration SET config = ? WHERE slug = ?")) {
            for (Map.Entry<String, String> row : rows.entrySet()) {
                update.setString(1, row.getValue());
                update.setString(2, row.getKey());
                update.executeUpdate();
            }
        }
        return values;
    }

    private int rewriteCredentials(Connection jdbc, BiFunction<SecretSlot, String, String> visit) throws SQLException {
        Subjects subjects = Subjects.of(jdbc);
        return rewriteColumn(jdbc, visit,
                "SELECT owner, " + subjects.column() + ", integration, connection, name, secret FROM credential", "secret",
                result -> SecretSlot.credential(new ConnectionKey(Owner.parse(result.getString("owner")).orElseThrow(),
                        result.getString("integration"), result.getString("connection"), result.getString("subject")),
                        result.getString("name")),
                (result, next) -> subjects.row(List.of(next, result.getString("owner")), result.getString("subject"),
                        List.of(result.getString("integration"), result.getString("connection"), result.getString("name"))),
                "UPDATE credential SET secret = ? WHERE owner = ?" + subjects.condition()
                        + " AND integration = ? AND connection = ? AND name = ?");
    }

    private int rewritePluginSettings(Connection jdbc, BiFunction<SecretSlot, String, String> visit) throws SQLException {
        Subjects subjects = Subjects.of(jdbc);
        return rewriteColumn(jdbc, visit, "SELECT plugin, owner, " + subjects.column() + ", name, setting FROM plugin_setting",
                "setting",
                result -> SecretSlot.pluginSetting(result.getString("plugin"), Owner.parse(result.getString("owner")).orElseThrow(),
                        result.getString("subject"), result.getString("name")),
                (result, next) -> subjects.row(List.of(next, result.getString("plugin"), result.getString("owner")),
                        result.getString("subject"), List.of(result.getString("name"))),
                "UPDATE plugin_setting SET setting = ? WHERE plugin = ? AND owner = ?" + subjects.condition() + " AND name = ?");
    }

    private int rewriteOauthClients(Connection jdbc, BiFunction<SecretSlot, String, String> visit) throws SQLException {
        Subjects subjects = Subjects.of(jdbc);
        return rewriteColumn(jdbc, visit,
                "SELECT owner, " + subjects.column() + ", slug, client_secret FROM oauth_client WHERE client_secret IS NOT NULL",
                "client_secret",
                result -> SecretSlot.oauthClient(Owner.parse(result.getString("owner")).orElseThrow(), result.getString("subject"),
                        result.getString("slug")),
                (result, next) -> subjects.row(List.of(next, result.getString("owner")), result.getString("subject"),
                        List.of(result.getString("slug"))),
                "UPDATE oauth_client SET client_secret = ? WHERE owner = ?" + subjects.condition() + " AND slug = ?");
    }

    /** Signed-in users' refresh tokens, once migration V58 made their table. */
    private int rewriteRefreshTokens(Connection jdbc, BiFunction<SecretSlot, String, String> visit) throws SQLException {
        if (!Subjects.hasTable(jdbc, "identity_user")) {
            return 0;
        }
        return rewriteColumn(jdbc, visit, "SELECT subject, refresh_token FROM identity_user WHERE refresh_token IS NOT NULL",
                "refresh_token", result -> SecretSlot.refreshToken(result.getString("subject")),
                (result, next) -> List.of(next, result.getString("subject")),
                "UPDATE identity_user SET refresh_token = ? WHERE subject = ?");
    }

    /** Reads something of the row {@code result} is on. */
    private interface FromRow<T> {
        T read(ResultSet result) throws SQLException;
    }

    /** The parameters of a row's {@code UPDATE} that stores {@code next}. */
    private interface UpdateOf {
        List<String> parameters(ResultSet result, String next) throws SQLException;
    }

    /**
     * Calls {@code visit} with the secret in {@code column} of each row {@code select} reads, and stores what it
     * answers where that differs, by {@code update} with the parameters {@code row} gives.
     *
     * @return how many values were written back
     */
    private static int rewriteColumn(Connection jdbc, BiFunction<SecretSlot, String, String> visit, String select, String column,
            FromRow<SecretSlot> slot, UpdateOf row, String update) throws SQLException {
        List<List<String>> rows = new ArrayList<>();
        try (PreparedStatement statement = jdbc.prepareStatement(select);
                ResultSet result = statement.executeQuery()) {
            while (result.next()) {
                String stored = result.getString(column);
                String next = visit.apply(slot.read(result), stored);
                if (!next.equals(stored)) {
                    rows.add(row.parameters(result, next));
                }
            }
        }
        return update(jdbc, update, rows);
    }

    private static int update(Connection jdbc, String sql, List<List<String>> rows) throws SQLException {
        try (PreparedStatement update = jdbc.prepareStatement(sql)) {
            for (List<String> row : rows) {
                for (int i = 0; i < row.size(); i++) {
                    update.setString(i + 1, row.get(i));
                }
                update.executeUpdate();
            }
        }
        return rows.size();
    }

    /**
     * Whether the tables have their {@code subject} column yet: migration V42 walks the secrets before V56 added it,
     * when every user row was the daemon's single user's.
     */
    private record Subjects(boolean stored) {

        static Subjects of(Connection jdbc) throws SQLException {
            // H2 keeps names upper case, PostgreSQL lower case
            for (String table : List.of("credential", "CREDENTIAL")) {
                try (ResultSet columns = jdbc.getMetaData().getColumns(null, jdbc.getSchema(), table, null)) {
                    while (columns.next()) {
                        if (columns.getString("COLUMN_NAME").equalsIgnoreCase("subject")) {
                            return new Subjects(true);
                        }
                    }
                }
            }
            return new Subjects(false);
        }

        static boolean hasTable(Connection jdbc, String name) throws SQLException {
            for (String table : List.of(name, name.toUpperCase(java.util.Locale.ROOT))) {
                try (ResultSet tables = jdbc.getMetaData().getTables(null, jdbc.getSchema(), table, null)) {
                    if (tables.next()) {
                        return true;
                    }
                }
            }
            return false;
        }

        String column() {
            return stored ? "subject" : "CASE WHEN owner = 'user' THEN '" + Principal.LOCAL_SUBJECT
                    + "' ELSE '' END AS subject";
        }

        String condition() {
            return stored ? " AND subject = ?" : "";
        }

        List<String> row(List<String> before, String subject, List<String> after) {
            List<String> row = new ArrayList<>(before);
            if (stored) {
                row.add(subject);
            }
            row.addAll(after);
            return row;
        }
    }
}
