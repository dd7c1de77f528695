package dev.tether.openapi;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import io.swagger.v3.core.util.Json;
import org.jspecify.annotations.Nullable;

/**
 * A Google API Discovery document ({@code kind: discovery#restDescription}) as an OpenAPI 3.1 document, with the
 * tool names, paths and OAuth template Executor 1.5.9's converter gives it: every method of the document and of its
 * nested resources is an operation whose tool path is the method's id without the service's name
 * ({@code oauth2.userinfo.v2.me.get} is {@code userinfo.v2.me.get}); the document's global parameters join each
 * method's own; {@code {+name}} path parameters keep their slashes; the API declares Google's OAuth 2 flow with the
 * document's scopes, compacted as Google's consent screen shows them.
 */
final class GoogleDiscovery {

    static final String KIND = "discovery#restDescription";
    static final String OAUTH_SCHEME = "googleOAuth2";
    private static final String AUTHORIZATION_URL = "https://accounts.google.com/o/oauth2/v2/auth";
    private static final String TOKEN_URL = "https://oauth2.googleapis.com/token";
    private static final Set<String> SCHEMA_TYPES = Set.of("array", "boolean", "integer", "null", "number", "object", "string");
    private static final Pattern RESERVED = Pattern.compile("\\{\\+([^{}]+)}");
    private static final Pattern DISCOVERY_REST = Pattern.compile("^/\\$discovery/rest$");
    private static final Set<String> CONSENT_BLOCKED = Set.of("https://www.googleapis.com/auth/chat.bot",
            "https://www.googleapis.com/auth/chat.import", "https://www.googleapis.com/auth/keep",
            "https://www.googleapis.com/auth/keep.readonly");
    private static final String CONSENT_BLOCKED_PREFIX = "https://www.googleapis.com/auth/chat.app.";
    private static final Map<String, Object> NONE = Map.of();
    /** A broad scope and the prefix of the narrower ones it covers: with the broad one present, they are left out. */
    private static final Map<String, String> BROAD_SCOPES = Map.of("https://mail.google.com/", "https://www.googleapis.com/auth/gmail.",
            "https://www.googleapis.com/auth/calendar", "https://www.googleapis.com/auth/calendar.",
            "https://www.googleapis.com/auth/drive", "https://www.googleapis.com/auth/drive.");

    /** The converted document and the authentication template the integration declares when given none. */
    record Conversion(String specText, String title, List<Map<String, Object>> authenticationTemplate) {
    }

    private GoogleDiscovery() {
    }

    /** Whether the text is a Discovery document: JSON whose {@code kind} says so. */
    static boolean recognises(String text) {
        if (!text.stripLeading().startsWith("{") || !text.contains(KIND)) {
            return false;
        }
        try {
            return KIND.equals(Json.mapper().readTree(text).path("kind").asText());
        }
        catch (Exception unreadable) {
            return false;
        }
    }

    /** The document converted; {@code discoveryUrl} is where it came from ({@code null} when pasted). */
    static Conversion convert(String text, @Nullable String discoveryUrl) {
        JsonNode document;
        try {
            document = Json.mapper().readTree(text);
        }
        catch (Exception unreadable) {
            throw new OpenApiParseException("Failed to parse Google Discovery document", unreadable);
        }
        if (document == null || !document.isObject()) {
            throw new OpenApiParseException("Failed to decode Google Discovery document: it is not a JSON object");
        }
        String service = trimmed(document.get("name"));
        String version = trimmed(document.get("version"));
        String rootUrl = trimmed(document.get("rootUrl"));
        if (service == null || version == null || rootUrl == null) {
            throw new OpenApiParseException("Google Discovery document is missing one of: name, version, rootUrl");
        }
        String servicePath = document.path("servicePath").isTextual() ? document.get("servicePath").asText().strip() : "";
        String baseUrl = baseUrl(rootUrl, servicePath);
        String givenTitle = trimmed(document.get("title"));
        String title = givenTitle != null ? givenTitle : service + " " + version;

        Map<String, Map<String, Object>> paths = new LinkedHashMap<>();
        for (JsonNode method : methods(document)) {
            String id = trimmed(method.get("id"));
            String pathTemplate = trimmed(method.get("path"));
            String httpMethod = method.path("httpMethod").isTextual() ? method.get("httpMethod").asText() : null;
            if (id == null || pathTemplate == null || httpMethod == null) {
                continue;
            }
            String toolPath = id.startsWith(service + ".") ? id.substring(service.length() + 1) : id;
            String template = pathTemplate.startsWith("/") ? pathTemplate : "/" + pathTemplate;
            String verb = httpMethod.toLowerCase(java.util.Locale.ROOT);
            String path = uniquePath(paths, RESERVED.matcher(template).replaceAll("{$1}"), verb, toolPath);
            paths.computeIfAbsent(path, p -> new LinkedHashMap<>()).put(verb, operation(document, method, toolPath, template));
        }

        Map<String, String> scopes = compactedScopes(document.path("auth").path("oauth2").path("scopes"));
        Map<String, Object> components = new LinkedHashMap<>();
        Map<String, Object> schemas = new LinkedHashMap<>();
        document.path("schemas").properties().forEach(entry -> schemas.put(entry.getKey(), schema(entry.getValue())));
        components.put("schemas", schemas);
        components.put("securitySchemes", object(OAUTH_SCHEME, object("type", "oauth2", "flows", object("authorizationCode",
                object("authorizationUrl", AUTHORIZATION_URL, "tokenUrl", TOKEN_URL, "scopes", scopes)))));

        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("openapi", "3.1.0");
        spec.put("info", object("title", title, "version", version));
        spec.put("servers", List.of(object("url", baseUrl)));
        spec.put("paths", paths);
        spec.put("components", components);
        spec.put("security", List.of(object(OAUTH_SCHEME, List.copyOf(scopes.keySet()))));
        Map<String, Object> origin = new LinkedHashMap<>();
        origin.put("kind", "googleDiscovery");
        if (discoveryUrl != null) {
            origin.put("discoveryUrl", normalizedDiscoveryUrl(discoveryUrl));
        }
        origin.put("service", service);
        origin.put("version", version);
        spec.put("x-executor-origin", origin);

        // Always declared, even with no scope left: a Discovery API is always OAuth, and without a method the UI
        // offers no way to connect an account.
        Map<String, Object> oauth = new LinkedHashMap<>();
        oauth.put("slug", OAUTH_SCHEME);
        oauth.put("kind", "oauth2");
        oauth.put("authorizationUrl", AUTHORIZATION_URL);
        oauth.put("tokenUrl", TOKEN_URL);
        oauth.put("scopes", List.copyOf(scopes.keySet()));
        try {
            return new Conversion(Json.mapper().writeValueAsString(spec), title, List.of(oauth));
        }
        catch (Exception unwritable) {
            throw new OpenApiParseException("Failed to convert Google Discovery document", unwritable);
        }
    }

    /** Methods of the document, then of each resource depth first, in the document's order. */
    private static List<JsonNode> methods(JsonNode document) {
        List<JsonNode> methods = new ArrayList<>();
        document.path("methods").forEach(methods::add);
        document.path("resources").forEach(resource -> methods.addAll(methods(resource)));
        return methods;
    }

    private static Map<String, Object> operation(JsonNode document, JsonNode method, String toolPath, String pathTemplate) {
        // A method's own parameter replaces the document's of that name, where the document's stood.
        Map<String, JsonNode> parameters = new LinkedHashMap<>();
        document.path("parameters").properties().forEach(entry -> located(entry.getValue(), entry.getKey(), parameters));
        method.path("parameters").properties().forEach(entry -> located(entry.getValue(), entry.getKey(), parameters));
        List<Map<String, Object>> shown = new ArrayList<>();
        parameters.forEach((name, parameter) -> {
            String in = parameter.get("location").asText();
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("name", name);
            one.put("in", in);
            one.put("required", in.equals("path") || parameter.path("required").asBoolean(false));
            String description = trimmed(parameter.get("description"));
            if (description != null) {
                one.put("description", description);
            }
            Map<String, Object> schema = schema(parameter);
            if (description != null) {
                schema.put("description", description);
            }
            boolean repeated = parameter.path("repeated").asBoolean(false);
            one.put("schema", repeated ? object("type", "array", "items", schema) : schema);
            if (in.equals("query")) {
                one.put("style", "form");
                one.put("explode", repeated);
            }
            if (in.equals("path") && pathTemplate.contains("{+" + name + "}")) {
                one.put("allowReserved", true);
            }
            shown.add(one);
        });
        Map<String, Object> operation = new LinkedHashMap<>();
        operation.put("operationId", toolPath);
        operation.put("x-executor-toolPath", toolPath);
        operation.put("x-executor-pathTemplate", pathTemplate);
        String description = trimmed(method.get("description"));
        if (description != null) {
            operation.put("description", description);
        }
        operation.put("parameters", shown);
        String request = method.path("request").path("$ref").isTextual() ? method.get("request").get("$ref").asText() : null;
        if (request != null) {
            operation.put("requestBody", object("required", false,
                    "content", object("application/json", object("schema", object("$ref", ref(request))))));
        }
        String response = method.path("response").path("$ref").isTextual() ? method.get("response").get("$ref").asText() : null;
        operation.put("responses", object("200", object("description", "Successful response",
                "content", object("application/json", object("schema", response != null ? object("$ref", ref(response)) : object())))));
        List<String> scopes = new ArrayList<>();
        method.path("scopes").forEach(scope -> {
            if (scope.isTextual()) {
                scopes.add(scope.asText());
            }
        });
        if (!scopes.isEmpty()) {
            operation.put("security", List.of(object(OAUTH_SCHEME, scopes)));
        }
        operation.put("x-google-scopes", scopes);
        return operation;
    }

    private static void located(JsonNode parameter, String name, Map<String, JsonNode> into) {
        String location = parameter.path("location").asText("");
        if (location.equals("path") || location.equals("query") || location.equals("header")) {
            into.put(name, parameter);
        }
    }

    /** A Discovery schema as a JSON Schema of OpenAPI's: references to components, Discovery's own keys left out. */
    private static Map<String, Object> schema(JsonNode raw) {
        Map<String, Object> schema = new LinkedHashMap<>();
        if (raw == null || !raw.isObject()) {
            return schema;
        }
        if (raw.path("$ref").isTextual()) {
            schema.put("$ref", ref(raw.get("$ref").asText()));
            return schema;
        }
        if (raw.path("description").isTextual()) {
            schema.put("description", raw.get("description").asText());
        }
        if (raw.path("title").isTextual()) {
            schema.put("title", raw.get("title").asText());
        }
        if (raw.path("format").isTextual()) {
            schema.put("format", raw.get("format").asText());
        }
        if (raw.path("readOnly").isBoolean()) {
            schema.put("readOnly", raw.get("readOnly").asBoolean());
        }
        if (raw.has("default") && !raw.get("default").isObject()) {
            schema.put("default", Json.mapper().convertValue(raw.get("default"), Object.class));
        }
        if (raw.path("enum").isArray() && !raw.get("enum").isEmpty()) {
            schema.put("enum", Json.mapper().convertValue(raw.get("enum"), List.class));
        }
        String type = raw.path("type").isTextual() && SCHEMA_TYPES.contains(raw.get("type").asText()) ? raw.get("type").asText() : null;
        if ("array".equals(type)) {
            schema.put("type", "array");
            schema.put("items", schema(raw.get("items")));
            return schema;
        }
        JsonNode properties = raw.get("properties");
        boolean hasProperties = properties != null && properties.isObject() && !properties.isEmpty();
        if ("object".equals(type) || hasProperties || raw.has("additionalProperties")) {
            schema.put("type", "object");
            if (hasProperties) {
                Map<String, Object> converted = new LinkedHashMap<>();
                properties.properties().forEach(entry -> converted.put(entry.getKey(), schema(entry.getValue())));
                schema.put("properties", converted);
            }
            if (raw.path("required").isArray() && !raw.get("required").isEmpty()) {
                schema.put("required", Json.mapper().convertValue(raw.get("required"), List.class));
            }
            JsonNode additional = raw.get("additionalProperties");
            if (additional != null) {
                schema.put("additionalProperties", additional.isBoolean() ? additional.asBoolean() : schema(additional));
            }
            return schema;
        }
        if (type != null) {
            schema.put("type", type);
        }
        return schema;
    }

    /**
     * The document's scopes as Google's consent screen grants them: {@code userinfo.email} and {@code .profile} as
     * {@code email} and {@code profile}, scopes no user consent can grant left out, and narrower scopes under a broad
     * one present left out. Descriptions kept.
     */
    private static Map<String, String> compactedScopes(JsonNode declared) {
        Map<String, String> raw = new LinkedHashMap<>();
        declared.properties().forEach(entry -> raw.put(entry.getKey(), trimmed(entry.getValue().get("description")) == null ? ""
                : trimmed(entry.getValue().get("description"))));
        Set<String> ordered = new LinkedHashSet<>();
        for (String scope : raw.keySet()) {
            String normalized = switch (scope.strip()) {
                case "https://www.googleapis.com/auth/userinfo.email" -> "email";
                case "https://www.googleapis.com/auth/userinfo.profile" -> "profile";
                default -> scope.strip();
            };
            if (!normalized.isEmpty() && !CONSENT_BLOCKED.contains(normalized) && !normalized.startsWith(CONSENT_BLOCKED_PREFIX)) {
                ordered.add(normalized);
            }
        }
        Map<String, String> compacted = new LinkedHashMap<>();
        for (String scope : ordered) {
            boolean covered = BROAD_SCOPES.entrySet().stream()
                    .anyMatch(broad -> !scope.equals(broad.getKey()) && ordered.contains(broad.getKey()) && scope.startsWith(broad.getValue()));
            if (!covered) {
                String description = raw.get(scope);
                if (description == null) {
                    description = raw.getOrDefault(scope.equals("email") ? "https://www.googleapis.com/auth/userinfo.email"
                            : scope.equals("profile") ? "https://www.googleapis.com/auth/userinfo.profile" : scope, "");
                }
                compacted.put(scope, description);
            }
        }
        return compacted;
    }

    /** The path, or, when another method already has it, one made of the tool path ({@code /a/b.c}, then {@code /2}...). */
    private static String uniquePath(Map<String, Map<String, Object>> paths, String preferred, String verb, String toolPath) {
        if (!paths.getOrDefault(preferred, NONE).containsKey(verb)) {
            return preferred;
        }
        String distinct = "/" + toolPath.replaceAll("[^A-Za-z0-9._~-]+", "/");
        if (!paths.getOrDefault(distinct, NONE).containsKey(verb)) {
            return distinct;
        }
        int index = 2;
        while (paths.getOrDefault(distinct + "/" + index, NONE).containsKey(verb)) {
            index++;
        }
        return distinct + "/" + index;
    }

    private static String baseUrl(String rootUrl, String servicePath) {
        try {
            return servicePath.isEmpty() ? URI.create(rootUrl).toString() : URI.create(rootUrl).resolve(servicePath).toString();
        }
        catch (IllegalArgumentException bad) {
            throw new OpenApiParseException("Google Discovery document has an invalid rootUrl or servicePath: " + rootUrl + servicePath, bad);
        }
    }

    /** {@code https://<service>.googleapis.com/$discovery/rest?version=v} as the Discovery service's own address of it. */
    private static String normalizedDiscoveryUrl(String url) {
        try {
            URI uri = URI.create(url.strip());
            String host = uri.getHost() == null ? "" : uri.getHost().toLowerCase(java.util.Locale.ROOT);
            Matcher version = Pattern.compile("(?:^|&)version=([^&]+)").matcher(uri.getRawQuery() == null ? "" : uri.getRawQuery());
            if (uri.getPath() == null || !DISCOVERY_REST.matcher(uri.getPath()).matches() || !host.endsWith(".googleapis.com") || !version.find()) {
                return url.strip();
            }
            String service = host.substring(0, host.length() - ".googleapis.com".length());
            service = service.equals("calendar-json") ? "calendar" : service.endsWith("-json") ? service.substring(0, service.length() - 5) : service;
            return service.isEmpty() ? url.strip() : "https://www.googleapis.com/discovery/v1/apis/" + service + "/" + version.group(1).strip() + "/rest";
        }
        catch (IllegalArgumentException bad) {
            return url.strip();
        }
    }

    /** A JSON object with its keys in the order given, so that the converted text is the same on every run. */
    private static Map<String, Object> object(Object... keysAndValues) {
        Map<String, Object> object = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            object.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return object;
    }

    private static String ref(String name) {
        return "#/components/schemas/" + name;
    }

    private static @Nullable String trimmed(@Nullable JsonNode value) {
        if (value == null || !value.isTextual() || value.asText().isBlank()) {
            return null;
        }
        return value.asText().strip();
    }
}
