package dev.tether.store.secrets;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;

import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.lang.Contract;
import org.springframework.stereotype.Component;

import dev.tether.daemon.DataDir;
import dev.tether.daemon.StartupFailure;
import dev.tether.daemon.TetherProperties;
import dev.tether.store.StoreProperties;

/**
 * Encrypts secret values for the store: AES-256-GCM, a random 96-bit nonce for each value, the value's
 * {@link SecretSlot} (table, row, field) as associated data, the result written as
 * {@value #PREFIX}{@code base64(nonce ‖ ciphertext ‖ tag)}. Every value is sealed, whatever it looks like; a sealed
 * value opens only in its own slot, and only a sealed value opens: plain text in the store is refused.
 *
 * <p>{@value #LEGACY_PREFIX} is how Tether sealed before values were bound to their rows (no associated data);
 * the migration {@link V42__BindSecretsToRows} opens those once and seals them again.
 *
 * <p>The key comes from {@code tether.store.secret-key} when set, otherwise from {@code <data-dir>/secret.key},
 * created {@code 0600} on first start. Never from the database: a dump of it alone gives nothing away.
 */
@Component
public final class SecretBox {

    static final String PREFIX = "tether:aes-gcm:v2:";
    static final String LEGACY_PREFIX = "tether:aes-gcm:v1:";
    static final String KEY_FILE = "secret.key";

    private static final int KEY_BYTES = 32;
    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SecretKeySpec key;
    private final String source;

    @Autowired
    SecretBox(StoreProperties properties, TetherProperties tether) {
        this(properties.secretKey() != null && !properties.secretKey().isBlank()
                        ? decode(properties.secretKey(), "tether.store.secret-key")
                        : readOrCreate(tether.dataDir().resolve(KEY_FILE)),
                properties.secretKey() != null && !properties.secretKey().isBlank()
                        ? "tether.store.secret-key" : tether.dataDir().resolve(KEY_FILE).toString());
    }

    SecretBox(byte[] key, String source) {
        if (key.length != KEY_BYTES) {
            throw new StartupFailure("the store key from " + source + " must be " + KEY_BYTES + " bytes (base64), was "
                    + key.length);
        }
        this.key = new SecretKeySpec(key, "AES");
        this.source = source;
    }

    /** A box with a fresh random key, for tests and tools that need one of their own. */
    static SecretBox random() {
        byte[] key = new byte[KEY_BYTES];
        RANDOM.nextBytes(key);
        return new SecretBox(key, "a random key");
    }

    /** Where the key came from, for messages: a setting's name or the key file's path, never the key. */
    String source() {
        return source;
    }

    /**
     * A key for {@code purpose} derived from the store key (HKDF-Expand of RFC 5869, one block of HMAC-SHA256; the store
     * key is random already, so it is its own pseudorandom key): whoever holds the store key derives it, nobody else, and
     * it tells nothing of the store key.
     */
    byte[] derive(String purpose) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key.getEncoded(), "HmacSHA256"));
            mac.update(purpose.getBytes(StandardCharsets.UTF_8));
            return mac.doFinal(new byte[] {1});
        }
        catch (GeneralSecurityException ex) {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", ex);
        }
    }

    /** Whether a stored value is sealed the current way (it may still not open: another key, another slot). */
    static boolean sealed(@Nullable String stored) {
        return stored != null && stored.startsWith(PREFIX);
    }

    /** Seals any value, one that looks sealed too: the user's value is whatever the user gave. */
    @Contract("!null, _ -> !null")
    public @Nullable String seal(@Nullable String plain, SecretSlot slot) {
        if (plain == null) {
            return null;
        }
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        try {
            Cipher cipher = cipher(Cipher.ENCRYPT_MODE, new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(slot.associatedData());
            byte[] sealed = cipher.doFinal(plain.getBytes(StandardCharsets.UTF_8));
            return PREFIX + Base64.getEncoder().encodeToString(ByteBuffer.allocate(nonce.length + sealed.length)
                    .put(nonce).put(sealed).array());
        }
        catch (GeneralSecurityException ex) {
            throw new IllegalStateException("AES-GCM is not available in this JVM", ex);
        }
    }

    /**
     * The plain value of a stored one, sealed for {@code slot}.
     *
     * @throws WrongKeyException when the value was sealed with another key, for another slot, or altered
     * @throws UnsealedSecretException when the value is not sealed at all (or sealed the old, unbound way)
     */
    @Contract("!null, _ -> !null")
    public @Nullable String open(@Nullable String stored, SecretSlot slot) {
        if (stored == null) {
            return null;
        }
        if (!sealed(stored)) {
            throw new UnsealedSecretException(slot);
        }
        return decrypt(stored.substring(PREFIX.length()), slot.associatedData())
                .orElseThrow(() -> new WrongKeyException(source, slot));
    }

    /** A value sealed the old way ({@value #LEGACY_PREFIX}, bound to no slot), opened; empty when it does not open. */
    Optional<String> openLegacy(@Nullable String stored) {
        return stored != null && stored.startsWith(LEGACY_PREFIX)
                ? decrypt(stored.substring(LEGACY_PREFIX.length()), null) : Optional.empty();
    }

    /** Whether a value with the old prefix could have been sealed at all: base64 as long as a nonce and a tag. */
    static boolean couldBeLegacySealed(String stored) {
        try {
            return Base64.getDecoder().decode(stored.substring(LEGACY_PREFIX.length())).length >= NONCE_BYTES + TAG_BITS / 8;
        }
        catch (IllegalArgumentException ex) {
            return false;
        }
    }

    private Optional<String> decrypt(String base64, byte @Nullable [] associatedData) {
        try {
            byte[] bytes = Base64.getDecoder().decode(base64);
            Cipher cipher = cipher(Cipher.DECRYPT_MODE, new GCMParameterSpec(TAG_BITS, bytes, 0, NONCE_BYTES));
            if (associatedData != null) {
                cipher.updateAAD(associatedData);
            }
            return Optional.of(new String(cipher.doFinal(bytes, NONCE_BYTES, bytes.length - NONCE_BYTES), StandardCharsets.UTF_8));
        }
        catch (GeneralSecurityException | IllegalArgumentException ex) {
            return Optional.empty();
        }
    }

    private Cipher cipher(int mode, GCMParameterSpec parameters) throws GeneralSecurityException {
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(mode, key, parameters);
        return cipher;
    }

    /** A sealed value that does not open: another key, another row, or tampering. Names the key's source and the slot. */
    static final class WrongKeyException extends RuntimeException {

        WrongKeyException(String source, SecretSlot slot) {
            super("the stored secret of " + slot + " does not decrypt with the store key from " + source
                    + ": is it the key it was written with? (tether.store.secret-key / TETHER_STORE_SECRET_KEY); "
                    + "a sealed value copied from another row does not open either", null, false, false);
        }
    }

    /** A value in a secret's place that is not sealed: Tether never writes one, so something else wrote it there. */
    static final class UnsealedSecretException extends RuntimeException {

        UnsealedSecretException(SecretSlot slot) {
            super("the stored secret of " + slot + " is not encrypted: Tether seals every secret it writes (and migration"
                    + " V42 sealed the older ones), so it was written to the database by something else; set it again"
                    + " through the API", null, false, false);
        }
    }

    private static byte[] decode(String base64, String source) {
        try {
            return Base64.getDecoder().decode(base64.strip());
        }
        catch (IllegalArgumentException ex) {
            throw new StartupFailure(source + " is not valid base64");
        }
    }

    private static byte[] readOrCreate(Path file) {
        try {
            if (Files.exists(file)) {
                return decode(Files.readString(file), file.toString());
            }
            byte[] key = new byte[KEY_BYTES];
            RANDOM.nextBytes(key);
            DataDir.writeOwnerOnly(file, Base64.getEncoder().encodeToString(key) + "\n");
            return key;
        }
        catch (IOException ex) {
            throw new StartupFailure("cannot read or create the store key " + file + ": " + ex.getMessage());
        }
    }
}
