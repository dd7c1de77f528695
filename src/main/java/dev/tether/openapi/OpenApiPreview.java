package dev.tether.openapi;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

/**
 * What {@code previewSpec} answers, as Executor 1.5.9: title, version, servers, operations, tags, security schemes,
 * the strategies that combine them, header presets for the UI's auth form and OAuth2 presets; and the
 * authentication template Executor derives from them when {@code addSpec} is given none.
 */
final class OpenApiPreview {

    private OpenApiPreview() {
    }

    static Map<String, Object> of(Map<String, Object> doc, OpenApiExtraction.Extracted extracted) {
        List<Map<String, Object>> schemes = securitySchemes(doc);
        List<Map<String, Object>> strategies = strategies(doc, schemes);
        Map<String, Object> preview = new LinkedHashMap<>();
        preview.put("title", extracted.title());
        preview.put("version", extracted.version());
        preview.put("servers", extracted.servers());
        preview.put("operationCount", extracted.operations().size());
        List<Map<String, Object>> operations = new ArrayList<>();
        Set<String> tags = new TreeSet<>();
        for (OpenApiExtraction.Operation operation : extracted.operations()) {
            Map<String, Object> shown = new LinkedHashMap<>();
            shown.put("operationId", operation.operationId());
            shown.put("method", operation.method());
            shown.put("path", operation.path());
            shown.put("summary", operation.summary());
            shown.put("tags", operation.tags());
            shown.put("deprecated", operation.deprecated());
            operations.add(shown);
            tags.addAll(operation.tags());
        }
        preview.put("operations", operations);
        preview.put("tags", List.copyOf(tags));
        preview.put("securitySchemes", schemes);
        preview.put("authStrategies", strategies);
        preview.put("headerPresets", headerPresets(schemes, strategies));
        preview.put("oauth2Presets", oauth2Presets(schemes));
        return preview;
    }

    /** Executor's template for a spec added without one: an {@code apikey-N} per header preset, an {@code oauth-X} per OAuth flow. */
    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> derivedTemplates(Map<String, Object> doc) {
        List<Map<String, Object>> schemes = securitySchemes(doc);
        List<Map<String, Object>> templates = new ArrayList<>();
        List<Map<String, Object>> presets = headerPresets(schemes, strategies(doc, schemes));
        for (int i = 0; i < presets.size(); i++) {
            Map<String, Object> preset = presets.get(i);
            String label = ((String) Objects.requireNonNull(preset.get("label"))).toLowerCase(java.util.Locale.ROOT);
            List<Map<String, Object>> placements = new ArrayList<>();
            for (String header : (List<String>) Objects.requireNonNull(preset.get("secretHeaders"))) {
                Map<String, Object> placement = new LinkedHashMap<>();
                placement.put("carrier", "header");
                placement.put("name", header);
                if (header.equalsIgnoreCase("authorization") && label.contains("bearer")) {
                    placement.put("prefix", "Bearer ");
                }
                else if (header.equalsIgnoreCase("authorization") && label.contains("basic")) {
                    placement.put("prefix", "Basic ");
                }
                placements.add(placement);
            }
            templates.add(new LinkedHashMap<>(Map.of("slug", "apikey-" + i, "kind", "apikey", "placements", placements)));
        }
        for (Map<String, Object> preset : oauth2Presets(schemes)) {
            Set<String> scopes = new LinkedHashSet<>(((Map<String, Object>) Objects.requireNonNull(preset.get("scopes"))).keySet());
            if ("auto".equals(preset.get("identityScopes"))) {
                scopes.addAll(List.of("openid", "email", "profile"));
            }
            Map<String, Object> oauth = new LinkedHashMap<>();
            oauth.put("slug", "oauth-" + preset.get("securitySchemeName"));
            oauth.put("kind", "oauth2");
            oauth.put("authorizationUrl", preset.get("authorizationUrl") == null ? "" : preset.get("authorizationUrl"));
            oauth.put("tokenUrl", preset.get("tokenUrl"));
            oauth.put("scopes", List.copyOf(scopes));
            templates.add(oauth);
        }
        return templates;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> securitySchemes(Map<String, Object> doc) {
        List<Map<String, Object>> schemes = new ArrayList<>();
        if (doc.get("components") instanceof Map<?, ?> components && components.get("securitySchemes") instanceof Map<?, ?> declared) {
            ((Map<String, Object>) declared).forEach((name, raw) -> {
                if (!(raw instanceof Map<?, ?> scheme) || !(scheme.get("type") instanceof String type)) {
                    return;
                }
                Map<String, Object> shown = new LinkedHashMap<>();
                shown.put("name", name);
                shown.put("type", type);
                String httpScheme = text(scheme.get("scheme"));
                shown.put("scheme", httpScheme == null ? null : httpScheme.toLowerCase(java.util.Locale.ROOT));
                shown.put("bearerFormat", text(scheme.get("bearerFormat")));
                shown.put("in", text(scheme.get("in")));
                shown.put("headerName", type.equals("apiKey") && "header".equals(scheme.get("in")) ? text(scheme.get("name")) : null);
                shown.put("description", text(scheme.get("description")));
                shown.put("flows", flows(scheme.get("flows")));
                shown.put("openIdConnectUrl", text(scheme.get("openIdConnectUrl")));
                schemes.add(shown);
            });
        }
        return schemes;
    }

    @SuppressWarnings("unchecked")
    private static @Nullable Map<String, Object> flows(@Nullable Object raw) {
        if (!(raw instanceof Map<?, ?> flows)) {
            return null;
        }
        Map<String, Object> shown = new LinkedHashMap<>();
        if (flows.get("authorizationCode") instanceof Map<?, ?> code && code.get("authorizationUrl") instanceof String authorizationUrl
                && code.get("tokenUrl") instanceof String tokenUrl) {
            Map<String, Object> flow = new LinkedHashMap<>();
            flow.put("authorizationUrl", authorizationUrl);
            flow.put("tokenUrl", tokenUrl);
            flow.put("refreshUrl", text(code.get("refreshUrl")));
            flow.put("scopes", scopes(code.get("scopes")));
            shown.put("authorizationCode", flow);
        }
        if (flows.get("clientCredentials") instanceof Map<?, ?> client && client.get("tokenUrl") instanceof String tokenUrl) {
            Map<String, Object> flow = new LinkedHashMap<>();
            flow.put("tokenUrl", tokenUrl);
            flow.put("refreshUrl", text(client.get("refreshUrl")));
            flow.put("scopes", scopes(client.get("scopes")));
            shown.put("clientCredentials", flow);
        }
        return shown;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> strategies(Map<String, Object> doc, List<Map<String, Object>> schemes) {
        List<Map<String, Object>> strategies = new ArrayList<>();
        if (doc.get("security") instanceof List<?> security) {
            for (Object entry : security) {
                if (entry instanceof Map<?, ?> requirement) {
                    strategies.add(Map.of("schemes", List.copyOf((Set<String>) (Set<?>) requirement.keySet())));
                }
            }
        }
        if (strategies.isEmpty()) {
            schemes.forEach(scheme -> strategies.add(Map.of("schemes", List.of(scheme.get("name")))));
        }
        return strategies;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> headerPresets(List<Map<String, Object>> schemes, List<Map<String, Object>> strategies) {
        Map<String, Map<String, Object>> byName = new LinkedHashMap<>();
        schemes.forEach(scheme -> byName.put((String) scheme.get("name"), scheme));
        List<Map<String, Object>> presets = new ArrayList<>();
        strategies:
        for (Map<String, Object> strategy : strategies) {
            List<Map<String, Object>> resolved = ((List<String>) Objects.requireNonNull(strategy.get("schemes"))).stream().map(byName::get)
                    .filter(java.util.Objects::nonNull).toList();
            if (resolved.isEmpty()) {
                continue;
            }
            Map<String, Object> headers = new LinkedHashMap<>();
            List<String> secretHeaders = new ArrayList<>();
            List<String> labels = new ArrayList<>();
            for (Map<String, Object> scheme : resolved) {
                String type = (String) scheme.get("type");
                String kind = scheme.get("scheme") == null ? "" : (String) scheme.get("scheme");
                if (Objects.requireNonNull(type).equals("http") && kind.equals("bearer")) {
                    headers.put("Authorization", null);
                    secretHeaders.add("Authorization");
                    labels.add("Bearer Token");
                }
                else if (type.equals("http") && kind.equals("basic")) {
                    headers.put("Authorization", null);
                    secretHeaders.add("Authorization");
                    labels.add("Basic Auth");
                }
                else if (type.equals("apiKey") && "header".equals(scheme.get("in"))) {
                    String header = scheme.get("headerName") != null ? (String) scheme.get("headerName") : (String) scheme.get("name");
                    headers.put(header, null);
                    secretHeaders.add(header);
                    labels.add((String) scheme.get("name"));
                }
                else if (type.equals("apiKey")) {
                    labels.add(scheme.get("name") + " (" + (scheme.get("in") == null ? "unknown" : scheme.get("in")) + ")");
                }
                else if (type.equals("oauth2") || type.equals("openIdConnect")) {
                    continue strategies;
                }
                else {
                    labels.add((String) scheme.get("name"));
                }
            }
            Map<String, Object> preset = new LinkedHashMap<>();
            preset.put("label", String.join(" + ", labels));
            preset.put("headers", headers);
            preset.put("secretHeaders", secretHeaders);
            presets.add(preset);
        }
        return presets;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> oauth2Presets(List<Map<String, Object>> schemes) {
        List<Map<String, Object>> presets = new ArrayList<>();
        for (Map<String, Object> scheme : schemes) {
            if (!"oauth2".equals(scheme.get("type")) || !(scheme.get("flows") instanceof Map<?, ?> flows)) {
                continue;
            }
            String name = (String) scheme.get("name");
            if (flows.get("authorizationCode") instanceof Map<?, ?> code) {
                Map<String, Object> preset = new LinkedHashMap<>();
                preset.put("label", "OAuth2 Authorization Code · " + name);
                preset.put("securitySchemeName", name);
                preset.put("flow", "authorizationCode");
                preset.put("authorizationUrl", code.get("authorizationUrl"));
                preset.put("tokenUrl", code.get("tokenUrl"));
                preset.put("refreshUrl", code.get("refreshUrl"));
                preset.put("scopes", code.get("scopes"));
                preset.put("identityScopes", "auto");
                presets.add(preset);
            }
            if (flows.get("clientCredentials") instanceof Map<?, ?> client) {
                Map<String, Object> preset = new LinkedHashMap<>();
                preset.put("label", "OAuth2 Client Credentials · " + name);
                preset.put("securitySchemeName", name);
                preset.put("flow", "clientCredentials");
                preset.put("authorizationUrl", null);
                preset.put("tokenUrl", client.get("tokenUrl"));
                preset.put("refreshUrl", client.get("refreshUrl"));
                preset.put("scopes", client.get("scopes"));
                preset.put("identityScopes", false);
                presets.add(preset);
            }
        }
        return presets;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> scopes(@Nullable Object raw) {
        Map<String, String> scopes = new LinkedHashMap<>();
        if (raw instanceof Map<?, ?> map) {
            ((Map<String, Object>) map).forEach((scope, description) -> {
                if (description instanceof String text) {
                    scopes.put(scope, text);
                }
            });
        }
        return scopes;
    }

    private static @Nullable String text(@Nullable Object value) {
        return value instanceof String text ? text : null;
    }
}
