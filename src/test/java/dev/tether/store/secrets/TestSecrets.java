package dev.tether.store.secrets;

import org.flywaydb.core.api.migration.JavaMigration;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.daemon.TetherProperties;

/**
 * The sealing of secrets at rest, for tests of the storage that seals through it: boxes with a key of the test's, the
 * start's checks and migration V42 as a daemon registers them, and what a sealed value and a refusal look like.
 */
public final class TestSecrets {

    /** How a value sealed to its row begins. */
    public static final String PREFIX = SecretBox.PREFIX;

    /** How a value sealed the old way, bound to no row, begins. */
    public static final String LEGACY_PREFIX = SecretBox.LEGACY_PREFIX;

    /** A sealed value that does not open: another key, another row, or tampering. */
    public static final Class<? extends RuntimeException> WRONG_KEY = SecretBox.WrongKeyException.class;

    /** A value in a secret's place that is not sealed. */
    public static final Class<? extends RuntimeException> UNSEALED = SecretBox.UnsealedSecretException.class;

    private TestSecrets() {
    }

    /** A box with {@code key} (32 bytes), which messages say came from {@code source}. */
    public static SecretBox box(byte[] key, String source) {
        return new SecretBox(key, source);
    }

    /** A box with a fresh random key. */
    public static SecretBox random() {
        return SecretBox.random();
    }

    /** Migration V42 with {@code box}'s key, as a daemon registers it among the SQL migrations. */
    public static JavaMigration bindSecretsToRows(SecretBox box) {
        return new V42__BindSecretsToRows(box, JsonMapper.builder().build());
    }

    /** The check of every stored secret that follows each start's migration, with {@code box}'s key. */
    public static SecretsAtRest atRest(SecretBox box, TetherProperties tether) {
        return new SecretsAtRest(JsonMapper.builder().build(), box, tether);
    }
}
