package dev.tether.store;

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
                for (String map : StoreJson.SECRET_MAPS) {
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
        List<List<String>> rows = new ArrayList<>();
        try (PreparedStatement select = jdbc.prepareStatement(
                "SELECT owner, " + subjects.column() + ", integration, connection, name, secret FROM credential");
                ResultSet result = select.executeQuery()) {
            while (result.next()) {
                String subject = result.getString("subject");
                ConnectionKey key = new ConnectionKey(Owner.parse(result.getString("owner")).orElseThrow(),
                        result.getString("integration"), result.getString("connection"), subject);
                String stored = result.getString("secret");
                String next = visit.apply(SecretSlot.credential(key, result.getString("name")), stored);
                if (!next.equals(stored)) {
                    rows.add(subjects.row(List.of(next, result.getString("owner")), subject,
                            List.of(result.getString("integration"), result.getString("connection"), result.getString("name"))));
                }
            }
        }
        return update(jdbc, "UPDATE credential SET secret = ? WHERE owner = ?" + subjects.condition()
                + " AND integration = ? AND connection = ? AND name = ?", rows);
    }

    private int rewritePluginSettings(Connection jdbc, BiFunction<SecretSlot, String, String> visit) throws SQLException {
        Subjects subjects = Subjects.of(jdbc);
        List<List<String>> rows = new ArrayList<>();
        try (PreparedStatement select = jdbc.prepareStatement(
                "SELECT plugin, owner, " + subjects.column() + ", name, setting FROM plugin_setting");
                ResultSet result = select.executeQuery()) {
            while (result.next()) {
                String stored = result.getString("setting");
                String subject = result.getString("subject");
                String next = visit.apply(SecretSlot.pluginSetting(result.getString("plugin"),
                        Owner.parse(result.getString("owner")).orElseThrow(), subject, result.getString("name")), stored);
                if (!next.equals(stored)) {
                    rows.add(subjects.row(List.of(next, result.getString("plugin"), result.getString("owner")), subject,
                            List.of(result.getString("name"))));
                }
            }
        }
        return update(jdbc, "UPDATE plugin_setting SET setting = ? WHERE plugin = ? AND owner = ?" + subjects.condition()
                + " AND name = ?", rows);
    }

    private int rewriteOauthClients(Connection jdbc, BiFunction<SecretSlot, String, String> visit) throws SQLException {
        Subjects subjects = Subjects.of(jdbc);
        List<List<String>> rows = new ArrayList<>();
        try (PreparedStatement select = jdbc.prepareStatement(
                "SELECT owner, " + subjects.column() + ", slug, client_secret FROM oauth_client WHERE client_secret IS NOT NULL");
                ResultSet result = select.executeQuery()) {
            while (result.next()) {
                String stored = result.getString("client_secret");
                String subject = result.getString("subject");
                String next = visit.apply(SecretSlot.oauthClient(Owner.parse(result.getString("owner")).orElseThrow(),
                        subject, result.getString("slug")), stored);
                if (!next.equals(stored)) {
                    rows.add(subjects.row(List.of(next, result.getString("owner")), subject, List.of(result.getString("slug"))));
                }
            }
        }
        return update(jdbc, "UPDATE oauth_client SET client_secret = ? WHERE owner = ?" + subjects.condition() + " AND slug = ?", rows);
    }

    /** Signed-in users' refresh tokens, once migration V58 made their table. */
    private int rewriteRefreshTokens(Connection jdbc, BiFunction<SecretSlot, String, String> visit) throws SQLException {
        if (!Subjects.hasTable(jdbc, "identity_user")) {
            return 0;
        }
        List<List<String>> rows = new ArrayList<>();
        try (PreparedStatement select = jdbc.prepareStatement(
                "SELECT subject, refresh_token FROM identity_user WHERE refresh_token IS NOT NULL");
                ResultSet result = select.executeQuery()) {
            while (result.next()) {
                String stored = result.getString("refresh_token");
                String next = visit.apply(SecretSlot.refreshToken(result.getString("subject")), stored);
                if (!next.equals(stored)) {
                    rows.add(List.of(next, result.getString("subject")));
                }
            }
        }
        return update(jdbc, "UPDATE identity_user SET refresh_token = ? WHERE subject = ?", rows);
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
