package dev.tether.onepassword;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * How to reach 1Password, as Executor's plugin takes it: the desktop app signed in to an account, or a service
 * account's token.
 *
 * @param kind        {@code desktop-app} or {@code service-account}
 * @param accountName the desktop app's account (e.g. {@code my.1password.com}); null for a service account
 * @param token       the service account's token; null for the desktop app. Never shown back.
 */
public record OnePasswordAuth(String kind, @Nullable String accountName, @Nullable String token) {

    public static final String DESKTOP_APP = "desktop-app";
    public static final String SERVICE_ACCOUNT = "service-account";

    /** Reads Executor's JSON shape; empty when it is not one of the two kinds with its one field a string. */
    static Optional<OnePasswordAuth> of(@Nullable Object value) {
        if (!(value instanceof Map<?, ?> auth)) {
            return Optional.empty();
        }
        Object kind = auth.get("kind");
        if (DESKTOP_APP.equals(kind) && auth.get("accountName") instanceof String account) {
            return Optional.of(new OnePasswordAuth(DESKTOP_APP, account, null));
        }
        if (SERVICE_ACCOUNT.equals(kind) && auth.get("token") instanceof String token) {
            return Optional.of(new OnePasswordAuth(SERVICE_ACCOUNT, null, token));
        }
        return Optional.empty();
    }

    /** As stored: the token included. */
    Map<String, Object> stored() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("kind", kind);
        json.put(kind.equals(DESKTOP_APP) ? "accountName" : "token", kind.equals(DESKTOP_APP) ? accountName : token);
        return json;
    }

    /** As Executor shows it: a service account's token left out. */
    Map<String, Object> redacted() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("kind", kind);
        if (kind.equals(DESKTOP_APP)) {
            json.put("accountName", accountName);
        }
        return json;
    }

    @Override
    public String toString() {
        return kind.equals(DESKTOP_APP) ? "desktop-app " + accountName : "service-account (token hidden)";
    }
}
