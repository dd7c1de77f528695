package dev.tether.store.secrets;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.flywaydb.core.api.migration.BaseJavaMigration;
import org.flywaydb.core.api.migration.Context;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.daemon.StartupFailure;

/**
 * Seals every stored secret again, bound to its row ({@link SecretSlot}), once: values sealed the old way
 * ({@link SecretBox#LEGACY_PREFIX}, no associated data) are opened and sealed anew, plain values left by a Tether
 * before encryption are sealed. After this migration a plain value in the store is refused
 * ({@link SecretsAtRest}).
 *
 * <p>An older Tether passed a value that merely began with the old prefix through unsealed. Such a value is told
 * from one sealed with another key this way: one that is not base64 of at least a nonce and a tag cannot have been
 * sealed; one that could but does not open is taken for plain text only when other old values open with the key
 * (the key is right, so this one was never sealed); when none opens, the key is wrong and the start stops, changing
 * nothing.
 */
@Component
final class V42__BindSecretsToRows extends BaseJavaMigration {

    private static final Logger log = LoggerFactory.getLogger(V42__BindSecretsToRows.class);

    private final SecretBox secrets;
    private final StoredSecrets stored;

    V42__BindSecretsToRows(SecretBox secrets, JsonMapper json) {
        this.secrets = secrets;
        this.stored = new StoredSecrets(json);
    }

    @Override
    public void migrate(Context context) throws Exception {
        AtomicInteger opened = new AtomicInteger();
        List<SecretSlot> unopened = new ArrayList<>();
        stored.rewrite(context.getConnection(), (slot, value) -> {
            if (value.startsWith(SecretBox.LEGACY_PREFIX) && SecretBox.couldBeLegacySealed(value)) {
                secrets.openLegacy(value).ifPresentOrElse(plain -> opened.incrementAndGet(), () -> unopened.add(slot));
            }
            return value;
        });
        if (!unopened.isEmpty() && opened.get() == 0) {
            throw new StartupFailure(new SecretBox.WrongKeyException(secrets.source(), unopened.get(0)).getMessage());
        }
        AtomicInteger plain = new AtomicInteger();
        int sealed = stored.rewrite(context.getConnection(), (slot, value) -> {
            if (SecretBox.sealed(value)) {
                return value;
            }
            String open = secrets.openLegacy(value).orElseGet(() -> {
                plain.incrementAndGet();
                return value;
            });
            return secrets.seal(open, slot);
        });
        if (sealed > 0) {
            log.info("sealed {} stored secret value(s) again, each bound to its row ({} of them were plain text)", sealed,
                    plain.get());
        }
    }
}
