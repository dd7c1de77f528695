package dev.tether.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;

import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

import dev.tether.daemon.DataDir;
import dev.tether.daemon.StartupFailure;
import dev.tether.daemon.TetherProperties;

/**
 * Encrypts secret values for the store: AES-256-GCM, a random 96-bit nonce for each value, the result written as
 * {@value #PREFIX}{@code base64(nonce ‖ ciphertext ‖ tag)}. The prefix tells a sealed value from a plain one left by
 * an older Tether (see {@link SecretsAtRest}) and leaves room for a next version.
 *
 * <p>The key comes from {@code tether.store.secret-key} when set, otherwise from {@code <data-dir>/secret.key},
 * created {@code 0600} on first start. Never from the database: a dump of it alone gives nothing away.
 */
@Component
final class SecretBox {

    static final String PREFIX = "tether:aes-gcm:v1:";
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

    static boolean sealed(String stored) {
        return stored != null && stored.startsWith(PREFIX);
    }

    String seal(String plain) {
        if (plain == null || sealed(plain)) {
            return plain;
        }
        try {
            byte[] nonce = new byte[NONCE_BYTES];
            RANDOM.nextBytes(nonce);
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
            byte[] sealed = cipher.doFinal(plain.getBytes(StandardCharsets.UTF_8));
            return PREFIX + Base64.getEncoder().encodeToString(ByteBuffer.allocate(nonce.length + sealed.length)
                    .put(nonce).put(sealed).array());
        }
        catch (GeneralSecurityException ex) {
            throw new IllegalStateException("AES-GCM is not available in this JVM", ex);
        }
    }

    /**
     * The plain value of a stored one; a value without the prefix is plain already (written by an older Tether).
     *
     * @throws WrongKeyException when the value was sealed with another key or has been altered
     */
    String open(String stored) {
        if (!sealed(stored)) {
            return stored;
        }
        try {
            byte[] bytes = Base64.getDecoder().decode(stored.substring(PREFIX.length()));
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, bytes, 0, NONCE_BYTES));
            return new String(cipher.doFinal(bytes, NONCE_BYTES, bytes.length - NONCE_BYTES), StandardCharsets.UTF_8);
        }
        catch (GeneralSecurityException | IllegalArgumentException ex) {
            throw new WrongKeyException(source);
        }
    }

    /** A sealed value that does not open: another key, or tampering. The message names the key's source only. */
    static final class WrongKeyException extends RuntimeException {

        WrongKeyException(String source) {
            super("stored secrets do not decrypt with the store key from " + source
                    + ": is it the key they were written with? (tether.store.secret-key / TETHER_STORE_SECRET_KEY)",
                    null, false, false);
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
