package dev.tether.store.secrets;

import org.springframework.stereotype.Component;

/**
 * Keys other features derive from the store key, so that what one replica signs every replica of the same store can
 * check (the replicas share the store key, or none of them could open the stored secrets), and a restarted daemon
 * still can. Each purpose gets a key of its own; none of them is the store key.
 */
@Component
public final class StoreKeys {

    private final SecretBox box;

    StoreKeys(SecretBox box) {
        this.box = box;
    }

    /** 32 bytes for {@code purpose}, the same on every replica of this store and across restarts. */
    public byte[] derived(String purpose) {
        return box.derive(purpose);
    }
}
