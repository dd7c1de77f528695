package dev.tether.onepassword;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * The 1Password binding Executor keeps: how to reach it, the vault to use and a label.
 *
 * @param auth    how to reach 1Password
 * @param vaultId the vault items are read from
 * @param name    what a person calls this binding
 */
public record OnePasswordConfig(OnePasswordAuth auth, String vaultId, String name) {

    /** Reads Executor's JSON shape ({@code {auth, vaultId, name}}); empty when it is not that. */
    public static Optional<OnePasswordConfig> of(@Nullable Object value) {
        if (!(value instanceof Map<?, ?> config) || !(config.get("vaultId") instanceof String vaultId)
                || !(config.get("name") instanceof String name)) {
            return Optional.empty();
        }
        return OnePasswordAuth.of(config.get("auth")).map(auth -> new OnePasswordConfig(auth, vaultId, name));
    }

    /** As stored, in Executor's key order. */
    Map<String, Object> stored() {
        return json(auth.stored());
    }

    /** As {@code GET /api/onepassword/config} shows it: without a service account's token. */
    public Map<String, Object> redacted() {
        return json(auth.redacted());
    }

    private Map<String, Object> json(Map<String, Object> authJson) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("auth", authJson);
        json.put("vaultId", vaultId);
        json.put("name", name);
        return json;
    }
}
