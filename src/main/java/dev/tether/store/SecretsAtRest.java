package dev.tether.store;

import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.callback.Context;
import org.flywaydb.core.api.callback.Event;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.daemon.DataDir;
import dev.tether.daemon.StartupFailure;
import dev.tether.daemon.TetherProperties;

/**
 * Runs after Flyway on every start, before anything reads the store: seals the secret values an older Tether left
 * in plain text (idempotent: sealed values are left as they are), checks that the values already sealed open with
 * the key in use (a wrong key stops the start with one line, naming where the key came from and no value), and
 * brings the data dir's files, the embedded database's among them now that it exists, to owner-only modes.
 *
 * <p>A Flyway callback rather than a migration because it must run on every start, and one that runs inside the
 * migration's JDBC connection, before the R2DBC side of the store is used.
 */
@Component
final class SecretsAtRest implements Callback {

    private static final Logger log = LoggerFactory.getLogger(SecretsAtRest.class);

    private final StoreJson json;
    private final SecretBox secrets;
    private final TetherProperties tether;

    SecretsAtRest(JsonMapper json, SecretBox secrets, TetherProperties tether) {
        this.json = new StoreJson(json, secrets);
        this.secrets = secrets;
        this.tether = tether;
    }

    @Override
    public boolean supports(Event event, Context context) {
        return event == Event.AFTER_MIGRATE;
    }

    @Override
    public boolean canHandleInTransaction(Event event, Context context) {
        return true;
    }

    @Override
    public void handle(Event event, Context context) {
        try {
            int sealed = sealConfigs(context.getConnection()) + sealCredentials(context.getConnection());
            if (sealed > 0) {
                log.info("encrypted {} secret value(s) stored in plain text by an earlier version", sealed);
            }
        }
        catch (SecretBox.WrongKeyException ex) {
            throw new StartupFailure(ex.getMessage());
        }
        catch (SQLException ex) {
            throw new IllegalStateException("cannot encrypt the store's secrets: " + ex.getMessage(), ex);
        }
        try {
            DataDir.restrict(tether.dataDir());
        }
        catch (IOException ex) {
            log.warn("cannot make {} owner-only: {}", tether.dataDir(), ex.toString());
        }
    }

    @Override
    public String getCallbackName() {
        return "tether-secrets-at-rest";
    }

    /** Reads each config back (which opens every sealed value) and rewrites those still holding plain values. */
    private int sealConfigs(Connection connection) throws SQLException {
        Map<String, String> rewritten = new LinkedHashMap<>();
        try (PreparedStatement select = connection.prepareStatement("SELECT slug, config FROM integration");
                ResultSet rows = select.executeQuery()) {
            while (rows.next()) {
                String stored = rows.getString("config");
                ServerConfig config = json.config(stored);
                if (json.hasPlainSecrets(stored)) {
                    rewritten.put(rows.getString("slug"), json.config(config));
                }
            }
        }
        try (PreparedStatement update = connection.prepareStatement("UPDATE integration SET config = ? WHERE slug = ?")) {
            for (Map.Entry<String, String> row : rewritten.entrySet()) {
                update.setString(1, row.getValue());
                update.setString(2, row.getKey());
                update.executeUpdate();
            }
        }
        return rewritten.size();
    }

    private int sealCredentials(Connection connection) throws SQLException {
        List<String[]> plain = new java.util.ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement(
                "SELECT owner, integration, connection, name, secret FROM credential");
                ResultSet rows = select.executeQuery()) {
            while (rows.next()) {
                String secret = rows.getString("secret");
                if (SecretBox.sealed(secret)) {
                    secrets.open(secret);
                }
                else {
                    plain.add(new String[] { secrets.seal(secret), rows.getString("owner"), rows.getString("integration"),
                            rows.getString("connection"), rows.getString("name") });
                }
            }
        }
        try (PreparedStatement update = connection.prepareStatement("UPDATE credential SET secret = ? WHERE owner = ? "
                + "AND integration = ? AND connection = ? AND name = ?")) {
            for (String[] row : plain) {
                for (int i = 0; i < row.length; i++) {
                    update.setString(i + 1, row[i]);
                }
                update.executeUpdate();
            }
        }
        return plain.size();
    }
}
