package dev.tether.store;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.store.RemoteConfig.RemoteTransport;

/**
 * The JSON kept in the store's text columns: server configs and catalogs. The secret values of a config (stdio
 * {@code env}, remote {@code headers} and {@code queryParams}) are sealed one by one with the {@link SecretBox};
 * names stay readable, so the store can still be inspected without the key.
 */
final class StoreJson {

    private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() { };
    private static final TypeReference<List<StoredTool>> TOOLS = new TypeReference<>() { };

    private static final List<String> SECRET_MAPS = List.of("env", "headers", "queryParams");

    private final JsonMapper json;
    private final SecretBox secrets;

    StoreJson(JsonMapper json, SecretBox secrets) {
        this.json = json;
        this.secrets = secrets;
    }

    String config(ServerConfig config) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("transport", config.transport());
        if (config instanceof StdioConfig stdio) {
            fields.put("command", stdio.command());
            fields.put("args", stdio.args());
            fields.put("env", sealed(stdio.env()));
            fields.put("cwd", stdio.cwd());
        }
        else if (config instanceof RemoteConfig remote) {
            fields.put("endpoint", remote.endpoint());
            fields.put("remoteTransport", remote.remoteTransport().wire());
            fields.put("queryParams", sealed(remote.queryParams()));
            fields.put("headers", sealed(remote.headers()));
            fields.put("authenticationTemplate", remote.authenticationTemplate());
        }
        return json.writeValueAsString(fields);
    }

    @SuppressWarnings("unchecked")
    ServerConfig config(String text) {
        Map<String, Object> fields = json.readValue(text, MAP);
        if ("stdio".equals(fields.get("transport"))) {
            return new StdioConfig((String) fields.get("command"), (List<String>) fields.get("args"),
                    opened((Map<String, String>) fields.get("env")), (String) fields.get("cwd"));
        }
        return new RemoteConfig((String) fields.get("endpoint"),
                RemoteTransport.parse((String) fields.get("remoteTransport")).orElse(RemoteTransport.AUTO),
                opened((Map<String, String>) fields.get("queryParams")), opened((Map<String, String>) fields.get("headers")),
                (List<Map<String, Object>>) fields.get("authenticationTemplate"));
    }

    /** Whether a stored config still holds a secret value in plain text (written by a Tether before encryption). */
    @SuppressWarnings("unchecked")
    boolean hasPlainSecrets(String text) {
        Map<String, Object> fields = json.readValue(text, MAP);
        return SECRET_MAPS.stream().map(fields::get).filter(Map.class::isInstance)
                .flatMap(values -> ((Map<String, Object>) values).values().stream())
                .anyMatch(value -> value instanceof String string && !SecretBox.sealed(string));
    }

    String seal(String secret) {
        return secrets.seal(secret);
    }

    String open(String stored) {
        return secrets.open(stored);
    }

    private Map<String, String> sealed(Map<String, String> values) {
        Map<String, String> sealed = new LinkedHashMap<>();
        values.forEach((name, value) -> sealed.put(name, secrets.seal(value)));
        return sealed;
    }

    private Map<String, String> opened(Map<String, String> values) {
        if (values == null) {
            return null;
        }
        Map<String, String> opened = new LinkedHashMap<>();
        values.forEach((name, value) -> opened.put(name, secrets.open(value)));
        return opened;
    }

    String tools(List<StoredTool> tools) {
        return json.writeValueAsString(tools);
    }

    List<StoredTool> tools(String text) {
        return json.readValue(text, TOOLS);
    }
}
