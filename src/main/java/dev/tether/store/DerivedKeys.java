package dev.tether.store;

import org.springframework.stereotype.Component;

/**
 * Keys for other uses than sealing stored values, derived from the store key: every replica that shares the store key
 * (as replicas must, to open each other's sealed values) derives the same ones, nothing else can, and none of them gives
 * the store key away. The store key itself never leaves {@link SecretBox}.
 */
@Component
public final class DerivedKeys {

    private final SecretBox box;

    DerivedKeys(SecretBox box) {
        this.box = box;
    }

    /** The key for {@code purpose}, 32 bytes: a purpose names its use and version, so that two uses never share a key. */
    public byte[] derive(String purpose) {
        return box.derive(purpose);
    }
}
