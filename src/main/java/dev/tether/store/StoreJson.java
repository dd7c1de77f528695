package dev.tether.store;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.store.RemoteConfig.RemoteTransport;

/** The JSON kept in the store's text columns: server configs and catalogs. */
final class StoreJson {

    private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() { };
    private static final TypeReference<List<StoredTool>> TOOLS = new TypeReference<>() { };

    private final JsonMapper json;

    StoreJson(JsonMapper json) {
        this.json = json;
    }

    String config(ServerConfig config) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("transport", config.transport());
        if (config instanceof StdioConfig stdio) {
            fields.put("command", stdio.command());
            fields.put("args", stdio.args());
            fields.put("env", stdio.env());
            fields.put("cwd", stdio.cwd());
        }
        else if (config instanceof RemoteConfig remote) {
            fields.put("endpoint", remote.endpoint());
            fields.put("remoteTransport", remote.remoteTransport().wire());
            fields.put("queryParams", remote.queryParams());
            fields.put("headers", remote.headers());
        }
        return json.writeValueAsString(fields);
    }

    @SuppressWarnings("unchecked")
    ServerConfig config(String text) {
        Map<String, Object> fields = json.readValue(text, MAP);
        if ("stdio".equals(fields.get("transport"))) {
            return new StdioConfig((String) fields.get("command"), (List<String>) fields.get("args"),
                    (Map<String, String>) fields.get("env"), (String) fields.get("cwd"));
        }
        return new RemoteConfig((String) fields.get("endpoint"),
                RemoteTransport.parse((String) fields.get("remoteTransport")).orElse(RemoteTransport.AUTO),
                (Map<String, String>) fields.get("queryParams"), (Map<String, String>) fields.get("headers"));
    }

    String tools(List<StoredTool> tools) {
        return json.writeValueAsString(tools);
    }

    List<StoredTool> tools(String text) {
        return json.readValue(text, TOOLS);
    }
}
