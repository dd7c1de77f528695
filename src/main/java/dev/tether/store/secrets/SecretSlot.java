package dev.tether.store.secrets;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;
import dev.tether.store.OwnerNames;

/**
 * Where a secret value is stored: its table, its row's key and its field. A sealed value is bound to its slot (the
 * slot is the AES-GCM associated data), so a value copied into another row, or another field of its own row, does
 * not open. Its text names no value and is safe in messages.
 */
public record SecretSlot(String table, String row, String field) {

    /** The maps of a stored server config whose values are secret, each sealed to its {@link #config} slot. */
    static final List<String> CONFIG_MAPS = List.of("env", "headers", "queryParams");

    /** A value of a server config's {@code env}, {@code headers} or {@code queryParams}. */
    public static SecretSlot config(String slug, String map, String name) {
        return new SecretSlot("integration", slug, map + "." + name);
    }

    /** A credential value of a connection; {@code user/…} for the daemon's single user, as before there were others. */
    public static SecretSlot credential(ConnectionKey key, String name) {
        return new SecretSlot("credential", key.toString(), name);
    }

    /** A plugin's setting (a 1Password token, say) for an owner. */
    public static SecretSlot pluginSetting(String plugin, Owner owner, String subject, String name) {
        return new SecretSlot("plugin_setting", plugin + "/" + OwnerNames.of(owner, subject), name);
    }

    /** The OIDC provider's refresh token of a signed-in user. */
    public static SecretSlot refreshToken(String subject) {
        return new SecretSlot("identity_user", subject, "refresh_token");
    }

    /** The client secret of an OAuth client. */
    public static SecretSlot oauthClient(Owner owner, String subject, String slug) {
        return new SecretSlot("oauth_client", OwnerNames.of(owner, subject) + "/" + slug, "client_secret");
    }

    /** A field of an execution's journal: {@code code}, {@code pause}, or a segment {@code segment.<n>}. */
    public static SecretSlot journal(String journalId, String field) {
        return new SecretSlot("execution_journal", journalId, field);
    }

    /** The three parts, each preceded by its length, so that no two slots share bytes. */
    byte[] associatedData() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (String part : new String[] { table, row, field }) {
            byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
            out.writeBytes(ByteBuffer.allocate(4).putInt(bytes.length).array());
            out.writeBytes(bytes);
        }
        return out.toByteArray();
    }

    @Override
    public String toString() {
        return table + " " + row + " " + field;
    }
}
