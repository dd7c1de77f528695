package dev.tether.openapi;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/** A document's (or path's, or operation's) {@code servers}: kept as Executor keeps them, and offered as a tool input. */
final class OpenApiServers {

    private OpenApiServers() {
    }

    /** The servers that have a URL, with their variables' defaults, choices and descriptions. */
    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> of(@Nullable Object list) {
        List<Map<String, Object>> servers = new ArrayList<>();
        if (list instanceof List<?> entries) {
            for (Object entry : entries) {
                if (entry instanceof Map<?, ?> server && server.get("url") instanceof String url && !url.isEmpty()) {
                    Map<String, Object> kept = new LinkedHashMap<>();
                    kept.put("url", url);
                    kept.put("description", server.get("description") instanceof String d ? d : null);
                    Map<String, Object> variables = new LinkedHashMap<>();
                    if (server.get("variables") instanceof Map<?, ?> vars) {
                        ((Map<String, Object>) vars).forEach((name, raw) -> {
                            if (raw instanceof Map<?, ?> v && v.get("default") != null) {
                                Map<String, Object> variable = new LinkedHashMap<>();
                                variable.put("default", String.valueOf(v.get("default")));
                                variable.put("enum", v.get("enum") instanceof List<?> e && !e.isEmpty()
                                        ? e.stream().filter(String.class::isInstance).toList() : null);
                                variable.put("description", v.get("description") instanceof String d ? d : null);
                                variables.put(name, variable);
                            }
                        });
                    }
                    kept.put("variables", variables.isEmpty() ? null : variables);
                    servers.add(kept);
                }
            }
        }
        return servers;
    }

    /**
     * The {@code server} input of a tool: which server (when there are several) and the URL variables; none when
     * there is one server without variables.
     */
    @SuppressWarnings("unchecked")
    static @Nullable Map<String, Object> input(List<Map<String, Object>> servers) {
        Map<String, Object> variables = new LinkedHashMap<>();
        for (Map<String, Object> server : servers) {
            if (server.get("variables") instanceof Map<?, ?> vars) {
                ((Map<String, Object>) vars).forEach((name, v) -> {
                    if (!variables.containsKey(name)) {
                        Map<String, Object> variable = (Map<String, Object>) v;
                        Map<String, Object> schema = new LinkedHashMap<>();
                        schema.put("type", "string");
                        schema.put("default", variable.get("default"));
                        if (variable.get("enum") != null) {
                            schema.put("enum", variable.get("enum"));
                        }
                        if (variable.get("description") != null) {
                            schema.put("description", variable.get("description"));
                        }
                        variables.put(name, schema);
                    }
                });
            }
        }
        if (servers.size() < 2 && variables.isEmpty()) {
            return null;
        }
        Map<String, Object> properties = new LinkedHashMap<>();
        if (servers.size() > 1) {
            properties.put("url", Map.of("type", "string", "enum", servers.stream().map(s -> s.get("url")).toList(),
                    "default", servers.get(0).get("url"), "description", "Which of the spec's servers to send the request to."));
        }
        if (!variables.isEmpty()) {
            properties.put("variables", Map.of("type", "object", "additionalProperties", false, "properties", variables,
                    "description", "Values for the server URL `{variables}`; spec defaults apply when omitted."));
        }
        return Map.of("type", "object", "additionalProperties", false, "properties", properties,
                "description", "Optional host selection and server-URL variables for this request.");
    }
}
