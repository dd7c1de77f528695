package dev.tether.store.storage;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.store.ConnectionKey;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.RemoteConfig.RemoteTransport;
import dev.tether.store.RemoteConfig;
import dev.tether.store.ServerConfig;
import dev.tether.store.StdioConfig;
import dev.tether.store.StoredTool;
import dev.tether.store.secrets.SecretBox;
import dev.tether.store.secrets.SecretSlot;

/**
 * The JSON kept in the store's text columns: server configs and catalogs. The secret values of a config (stdio
 * {@code env}, remote and HTTP source {@code headers} and {@code queryParams}) are sealed one by one with the
 * {@link SecretBox}, each bound to its integration, map and name ({@link SecretSlot}); names stay readable, so the
 * store can still be inspected without the key.
 */
final class StoreJson {

    private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() { };
    private static final TypeReference<List<StoredTool>> TOOLS = new TypeReference<>() { };

    private final JsonMapper json;
    private final SecretBox secrets;

    StoreJson(JsonMapper json, SecretBox secrets) {
        this.json = json;
        this.secrets = secrets;
    }

    String config(String slug, ServerConfig config) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("transport", config.transport());
        if (config instanceof StdioConfig stdio) {
            // stored as given: a field the client left out stays out, and reads back as left out
            fields.put("command", stdio.command());
            putIfGiven(fields, stdio.given("args"), "args", stdio.args());
            putIfGiven(fields, stdio.given("env"), "env", sealed(slug, "env", stdio.env()));
            putIfGiven(fields, stdio.given("cwd"), "cwd", stdio.cwd());
        }
        else if (config instanceof RemoteConfig remote) {
            fields.put("endpoint", remote.endpoint());
            fields.put("remoteTransport", remote.remoteTransport().wire());
            putIfGiven(fields, remote.given("queryParams"), "queryParams", sealed(slug, "queryParams", remote.queryParams()));
            putIfGiven(fields, remote.given("headers"), "headers", sealed(slug, "headers", remote.headers()));
            fields.put("authenticationTemplate", remote.authenticationTemplate());
        }
        else if (config instanceof HttpSourceConfig source) {
            fields.put("settings", source.settings());
            fields.put("queryParams", sealed(slug, "queryParams", source.queryParams()));
            fields.put("headers", sealed(slug, "headers", source.headers()));
            fields.put("tools", source.tools());
            fields.put("operations", source.operations());
        }
        return json.writeValueAsString(fields);
    }

    @SuppressWarnings("unchecked")
    ServerConfig config(String slug, String text) {
        Map<String, Object> fields = json.readValue(text, MAP);
        if ("stdio".equals(fields.get("transport"))) {
            return new StdioConfig((String) fields.get("command"), (List<String>) fields.get("args"),
                    opened(slug, "env", (Map<String, String>) fields.get("env")), (String) fields.get("cwd"));
        }
        if (HttpSourceConfig.OPENAPI.equals(fields.get("transport")) || HttpSourceConfig.GRAPHQL.equals(fields.get("transport"))) {
            return new HttpSourceConfig((String) fields.get("transport"), (Map<String, Object>) fields.get("settings"),
                    opened(slug, "headers", (Map<String, String>) fields.get("headers")),
                    opened(slug, "queryParams", (Map<String, String>) fields.get("queryParams")),
                    json.convertValue(fields.get("tools"), TOOLS), (Map<String, Map<String, Object>>) fields.get("operations"));
        }
        return new RemoteConfig((String) fields.get("endpoint"),
                RemoteTransport.parse((String) fields.get("remoteTransport")).orElse(RemoteTransport.AUTO),
                opened(slug, "queryParams", (Map<String, String>) fields.get("queryParams")),
                opened(slug, "headers", (Map<String, String>) fields.get("headers")),
                (List<Map<String, Object>>) fields.get("authenticationTemplate"));
    }

    private static void putIfGiven(Map<String, Object> fields, boolean given, String field, @Nullable Object value) {
        if (given) {
            fields.put(field, value);
        }
    }

    /** Any other secret, sealed for its slot. */
    String seal(SecretSlot slot, String secret) {
        return secrets.seal(secret, slot);
    }

    String open(SecretSlot slot, String stored) {
        return secrets.open(stored, slot);
    }

    /** A credential value, sealed for its connection and name. */
    String seal(ConnectionKey key, String name, String secret) {
        return secrets.seal(secret, SecretSlot.credential(key, name));
    }

    String open(ConnectionKey key, String name, String stored) {
        return secrets.open(stored, SecretSlot.credential(key, name));
    }

    private Map<String, String> sealed(String slug, String map, Map<String, String> values) {
        Map<String, String> sealed = new LinkedHashMap<>();
        values.forEach((name, value) -> sealed.put(name, secrets.seal(value, SecretSlot.config(slug, map, name))));
        return sealed;
    }

    private @Nullable Map<String, String> opened(String slug, String map, @Nullable Map<String, String> values) {
        if (values == null) {
            return null;
        }
        Map<String, String> opened = new LinkedHashMap<>();
        values.forEach((name, value) -> opened.put(name, secrets.open(value, SecretSlot.config(slug, map, name))));
        return opened;
    }

    String tools(List<StoredTool> tools) {
        return json.writeValueAsString(tools);
    }

    List<StoredTool> tools(String text) {
        return json.readValue(text, TOOLS);
    }
}
