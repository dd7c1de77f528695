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
                + rewriteOauthClients(jdbc, visit);
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
        List<String[]> rows = new ArrayList<>();
        try (PreparedStatement select = jdbc.prepareStatement(
                "SELECT owner, integration, connection, name, secret FROM credential");
                ResultSet result = select.executeQuery()) {
            while (result.next()) {
                ConnectionKey key = new ConnectionKey(Owner.parse(result.getString("owner")).orElseThrow(),
                        result.getString("integration"), result.getString("connection"));
                String stored = result.getString("secret");
                String next = visit.apply(SecretSlot.credential(key, result.getString("name")), stored);
                if (!next.equals(stored)) {
                    rows.add(new String[] { next, result.getString("owner"), result.getString("integration"),
                            result.getString("connection"), result.getString("name") });
                }
            }
        }
        try (PreparedStatement update = jdbc.prepareStatement("UPDATE credential SET secret = ? WHERE owner = ? "
                + "AND integration = ? AND connection = ? AND name = ?")) {
            for (String[] row : rows) {
                for (int i = 0; i < row.length; i++) {
                    update.setString(i + 1, row[i]);
                }
                update.executeUpdate();
            }
        }
        return rows.size();
    }

    private int rewritePluginSettings(Connection jdbc, BiFunction<SecretSlot, String, String> visit) throws SQLException {
        List<String[]> rows = new ArrayList<>();
        try (PreparedStatement select = jdbc.prepareStatement("SELECT plugin, owner, name, setting FROM plugin_setting");
                ResultSet result = select.executeQuery()) {
            while (result.next()) {
                String stored = result.getString("setting");
                String next = visit.apply(SecretSlot.pluginSetting(result.getString("plugin"),
                        Owner.parse(result.getString("owner")).orElseThrow(), result.getString("name")), stored);
                if (!next.equals(stored)) {
                    rows.add(new String[] { next, result.getString("plugin"), result.getString("owner"), result.getString("name") });
                }
            }
        }
        try (PreparedStatement update = jdbc.prepareStatement(
                "UPDATE plugin_setting SET setting = ? WHERE plugin = ? AND owner = ? AND name = ?")) {
            for (String[] row : rows) {
                for (int i = 0; i < row.length; i++) {
                    update.setString(i + 1, row[i]);
                }
                update.executeUpdate();
            }
        }
        return rows.size();
    }

    private int rewriteOauthClients(Connection jdbc, BiFunction<SecretSlot, String, String> visit) throws SQLException {
        List<String[]> rows = new ArrayList<>();
        try (PreparedStatement select = jdbc.prepareStatement(
                "SELECT owner, slug, client_secret FROM oauth_client WHERE client_secret IS NOT NULL");
                ResultSet result = select.executeQuery()) {
            while (result.next()) {
                String stored = result.getString("client_secret");
                String next = visit.apply(SecretSlot.oauthClient(Owner.parse(result.getString("owner")).orElseThrow(),
                        result.getString("slug")), stored);
                if (!next.equals(stored)) {
                    rows.add(new String[] { next, result.getString("owner"), result.getString("slug") });
                }
            }
        }
        try (PreparedStatement update = jdbc.prepareStatement(
                "UPDATE oauth_client SET client_secret = ? WHERE owner = ? AND slug = ?")) {
            for (String[] row : rows) {
                for (int i = 0; i < row.length; i++) {
                    update.setString(i + 1, row[i]);
                }
                update.executeUpdate();
            }
        }
        return rows.size();
    }
}
