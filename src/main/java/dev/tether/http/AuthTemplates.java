package dev.tether.http;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Authentication templates of HTTP sources, as Executor 1.5.9 keeps them: a list of methods, each with a slug that
 * a connection names as its {@code template}. Methods are given in the request dialect ({@code type: "apiKey"} with
 * {@code headers}/{@code queryParams} whose values are a literal, or a list of a prefix and
 * {@code {type: "variable", name}}), or as {@code kind: "oauth2"} / {@code kind: "none"}; they are kept as
 * Executor stores them ({@code kind: "apikey"} with {@code placements}). A placement renders
 * {@code prefix + values[variable]}, {@code variable} being {@code token} when absent.
 */
public final class AuthTemplates {

    /** The input a placement renders from when it names none; a connection's single {@code value}. */
    public static final String TOKEN = "token";

    private AuthTemplates() {
    }

    /** The given methods in Executor's stored shape, each with a slug: its own, or one after its kind. */
    public static List<Map<String, Object>> normalize(List<?> inputs, Set<String> oauthKeys) {
        List<Map<String, Object>> methods = new ArrayList<>();
        Set<String> taken = new HashSet<>();
        int index = 0;
        for (Object input : inputs) {
            String at = "authenticationTemplate[" + index++ + "]";
            if (!(input instanceof Map<?, ?> fields)) {
                throw new InvalidTemplateException("invalid_template", "`" + at + "` must be an object");
            }
            Map<String, Object> method = new LinkedHashMap<>();
            String kind;
            if ("apiKey".equals(fields.get("type"))) {
                kind = "apikey";
                method.put("kind", kind);
                if (fields.get("label") instanceof String label) {
                    method.put("label", label);
                }
                List<Map<String, Object>> placements = new ArrayList<>();
                placements(placements, "header", fields.get("headers"), at + ".headers");
                placements(placements, "query", fields.get("queryParams"), at + ".queryParams");
                method.put("placements", placements);
            }
            else if ("oauth2".equals(fields.get("kind")) || "none".equals(fields.get("kind"))) {
                kind = (String) Objects.requireNonNull(fields.get("kind"));
                method.put("kind", kind);
                if (kind.equals("oauth2")) {
                    for (String key : oauthKeys) {
                        if (fields.get(key) != null) {
                            method.put(key, fields.get(key));
                        }
                    }
                }
            }
            else {
                throw new InvalidTemplateException("invalid_template",
                        "`" + at + "` must be {type: \"apiKey\", ...}, {kind: \"oauth2\", ...} or {kind: \"none\"}");
            }
            String requested = fields.get("slug") instanceof String slug && !slug.isBlank() ? slug.strip() : kind;
            String slug = requested;
            for (int n = 2; taken.contains(slug); n++) {
                slug = requested + "_" + n;
            }
            taken.add(slug);
            Map<String, Object> slugged = new LinkedHashMap<>();
            slugged.put("slug", slug);
            slugged.putAll(method);
            methods.add(slugged);
        }
        return methods;
    }

    /** Executor's merge: a method whose slug is already there replaces it in place; the others are appended. */
    public static List<Map<String, Object>> merge(List<Map<String, Object>> existing, List<Map<String, Object>> incoming) {
        List<Map<String, Object>> merged = new ArrayList<>(existing);
        for (Map<String, Object> method : incoming) {
            int at = -1;
            for (int i = 0; i < merged.size(); i++) {
                if (Objects.requireNonNull(merged.get(i).get("slug")).equals(method.get("slug"))) {
                    at = i;
                }
            }
            if (at >= 0) {
                merged.set(at, method);
            }
            else {
                merged.add(method);
            }
        }
        return merged;
    }

    /** What a source's template becomes when {@code given} methods replace it, or are merged into it (Executor's default). */
    public static List<Map<String, Object>> configure(List<Map<String, Object>> existing, List<?> given, boolean replace,
            Set<String> oauthKeys) {
        List<Map<String, Object>> incoming = normalize(given, oauthKeys);
        return replace ? incoming : merge(existing, incoming);
    }

    /**
     * Headers and query values to add to a request; for an {@code oauth2} method, where the connection's access token
     * goes ({@code bearer}), which the caller fills in with {@link #withToken} once it has the token.
     */
    public record Rendered(Map<String, String> headers, Map<String, String> queryParams, @Nullable BearerPlacement bearer) {

        public Rendered(Map<String, String> headers, Map<String, String> queryParams) {
            this(headers, queryParams, null);
        }

        /** These values with the access token in its place. */
        public Rendered withToken(String token) {
            if (bearer == null) {
                return this;
            }
            Map<String, String> withToken = new LinkedHashMap<>(headers);
            withToken.put(bearer.header(), bearer.prefix() + token);
            return new Rendered(withToken, queryParams, null);
        }
    }

    /** The header an OAuth access token is sent in, and what comes before it: {@code Authorization: Bearer <token>} unless the method says otherwise. */
    public record BearerPlacement(String header, String prefix) {
    }

    /**
     * The connection's credential placed as its template says. A connection made with a single {@code value} has it
     * under the template's name, which stands for {@code token}. Fails with {@link InvalidTemplateException} when a
     * value the template needs is missing, or when the template is unknown; an OAuth template renders where its token goes; a template
     * named {@code none}, or a source with no templates, renders nothing.
     */
    @SuppressWarnings("unchecked")
    public static Rendered render(List<Map<String, Object>> methods, String template, Map<String, String> values,
            String source) {
        Map<String, String> headers = new LinkedHashMap<>();
        Map<String, String> query = new LinkedHashMap<>();
        Map<String, Object> method = methods.stream().filter(m -> template.equals(m.get("slug"))).findFirst().orElse(null);
        if (method == null) {
            if (template.equals("none") || methods.isEmpty()) {
                return new Rendered(headers, query);
            }
            throw new InvalidTemplateException("connection_template_unknown", "Source \"" + source
                    + "\" has no authentication method \"" + template + "\"");
        }
        switch ((String) Objects.requireNonNull(method.get("kind"))) {
            case "none" -> {
            }
            case "oauth2" -> {
                String header = method.get("header") instanceof String named && !named.isBlank() ? named : "Authorization";
                String prefix = method.get("prefix") instanceof String given ? given : "Bearer ";
                return new Rendered(headers, query, new BearerPlacement(header, prefix));
            }
            default -> {
                for (Map<String, Object> placement : (List<Map<String, Object>>) Objects.requireNonNull(method.get("placements"))) {
                    String rendered;
                    if (placement.get("literal") instanceof String literal) {
                        rendered = literal;
                    }
                    else {
                        String variable = placement.get("variable") instanceof String v ? v : TOKEN;
                        String value = values.get(variable);
                        if (value == null && variable.equals(TOKEN)) {
                            value = values.get(template);
                        }
                        if (value == null || value.isEmpty()) {
                            throw new InvalidTemplateException("connection_value_missing", "The connection for \"" + source
                                    + "\" has no value for \"" + variable + "\". Update the connection.");
                        }
                        rendered = (placement.get("prefix") instanceof String prefix ? prefix : "") + value;
                    }
                    ("header".equals(placement.get("carrier")) ? headers : query).put((String) placement.get("name"), rendered);
                }
            }
        }
        return new Rendered(headers, query);
    }

    private static void placements(List<Map<String, Object>> placements, String carrier, @Nullable Object entries, String at) {
        if (entries == null) {
            return;
        }
        if (!(entries instanceof Map<?, ?> map)) {
            throw new InvalidTemplateException("invalid_template", "`" + at + "` must be an object");
        }
        map.forEach((name, value) -> {
            Map<String, Object> placement = new LinkedHashMap<>();
            placement.put("carrier", carrier);
            placement.put("name", String.valueOf(name));
            if (value instanceof String literal) {
                placement.put("literal", literal);
            }
            else if (value instanceof List<?> parts) {
                StringBuilder prefix = new StringBuilder();
                String variable = null;
                for (Object part : parts) {
                    if (part instanceof String text && variable == null) {
                        prefix.append(text);
                    }
                    else if (part instanceof Map<?, ?> ref && "variable".equals(ref.get("type")) && ref.get("name") instanceof String refName
                            && variable == null) {
                        variable = refName;
                    }
                    else {
                        throw new InvalidTemplateException("invalid_template", "`" + at + "." + name
                                + "` must be text before one {type: \"variable\", name}");
                    }
                }
                if (variable == null) {
                    placement.put("literal", prefix.toString());
                }
                else {
                    if (!prefix.isEmpty()) {
                        placement.put("prefix", prefix.toString());
                    }
                    if (!variable.equals(TOKEN)) {
                        placement.put("variable", variable);
                    }
                }
            }
            else {
                throw new InvalidTemplateException("invalid_template", "`" + at + "." + name + "` must be text or a list");
            }
            placements.add(placement);
        });
    }
}
