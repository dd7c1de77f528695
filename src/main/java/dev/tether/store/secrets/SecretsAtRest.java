package dev.tether.store.secrets;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;

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
 * Runs after Flyway on every start (or in its place, {@code store.storage.StoreMigration}), before anything reads the store: checks
 * that every stored secret is sealed and opens in its row with the key in use, and brings the data dir's files, the
 * embedded database's among them now that it exists, to owner-only modes. A wrong key, or a value not sealed (something other than Tether wrote it after
 * {@link V42__BindSecretsToRows} sealed the older ones), stops the start with one line naming the key's source and
 * the value's row and field, never the value.
 *
 * <p>A Flyway callback rather than a migration because it must run on every start, and one that runs inside the
 * migration's JDBC connection, before the R2DBC side of the store is used.
 */
@Component
public final class SecretsAtRest implements Callback {

    private static final Logger log = LoggerFactory.getLogger(SecretsAtRest.class);

    private final StoredSecrets stored;
    private final SecretBox secrets;
    private final TetherProperties tether;

    SecretsAtRest(JsonMapper json, SecretBox secrets, TetherProperties tether) {
        this.stored = new StoredSecrets(json);
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
        check(context.getConnection());
    }

    /** The check itself, on the store's JDBC connection: after Flyway's migrate, or on a store it had nothing to do for. */
    public void check(Connection jdbc) {
        try {
            stored.rewrite(jdbc, (slot, value) -> {
                secrets.open(value, slot);
                return value;
            });
        }
        catch (SecretBox.WrongKeyException | SecretBox.UnsealedSecretException ex) {
            throw new StartupFailure(ex.getMessage());
        }
        catch (SQLException ex) {
            throw new IllegalStateException("cannot read the store's secrets: " + ex.getMessage(), ex);
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
}
