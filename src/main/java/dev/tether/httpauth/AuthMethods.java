package dev.tether.httpauth;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

import org.jspecify.annotations.Nullable;

/**
 * Executor's HTTP auth methods of an integration ({@code authenticationTemplate}), as JSON maps in Executor's shapes:
 * {@code {slug, kind: "none"}}, {@code {slug, kind: "oauth2"}} and {@code {slug, kind: "apikey", label?, placements}}
 * where a placement is {@code {carrier: "header"|"query", name, prefix?, variable?, literal?}}. Callers author apikey
 * methods in Executor's request-shaped dialect ({@code {type: "apiKey", headers: {Authorization: ["Bearer ",
 * {type: "variable", name: "token"}]}}}); this class reads that, gives every method a stable slug, merges or
 * replaces a list as Executor's {@code configureAuth} does, and describes methods as a UI lists them.
 */
public final class AuthMethods {

    public static final String TOKEN = "token";

    private AuthMethods() {
    }

    /** Executor's default for a remote MCP server added without auth: no authentication. */
    public static List<Map<String, Object>> none() {
        return List.of(Map.of("slug", "none", "kind", "none"));
    }

    /**
     * The methods as given, checked and expanded to canonical placements; slugs stay as given (possibly absent).
     *
     * @throws InvalidAuthMethodException naming what is wrong
     */
    public static List<Map<String, Object>> expand(Object input) {
        if (!(input instanceof List<?> methods)) {
            throw new InvalidAuthMethodException("`authenticationTemplate` must be an array of auth methods");
        }
        List<Map<String, Object>> expanded = new ArrayList<>();
        for (int i = 0; i < methods.size(); i++) {
            expanded.add(expandOne(methods.get(i), "authenticationTemplate[" + i + "]"));
        }
        return expanded;
    }

    /** Replace mode: the full set, each method given a slug (its own, else one from its kind), {@code _2}… on collision. */
    public static List<Map<String, Object>> normalize(List<Map<String, Object>> methods) {
        Set<String> taken = new HashSet<>();
        List<Map<String, Object>> normalized = new ArrayList<>();
        for (Map<String, Object> method : methods) {
            String requested = slugOf(method);
            if (requested.isEmpty()) {
                requested = defaultSlug(method);
            }
            String slug = requested;
            for (int n = 2; taken.contains(slug); n++) {
                slug = requested + "_" + n;
            }
            taken.add(slug);
            normalized.add(withSlug(method, slug));
        }
        return normalized;
    }

    /**
     * Merge mode: an incoming method whose slug matches an existing one replaces it in place; others are appended,
     * those without a slug (or with one already taken) under a fresh {@code custom_<id>} slug.
     */
    public static List<Map<String, Object>> merge(List<Map<String, Object>> existing, List<Map<String, Object>> incoming) {
        List<Map<String, Object>> result = new ArrayList<>(existing);
        Set<String> taken = new HashSet<>();
        result.forEach(method -> taken.add(slugOf(method)));
        for (Map<String, Object> method : incoming) {
            String requested = slugOf(method);
            int at = indexOf(result, requested);
            if (!requested.isEmpty() && at >= 0) {
                result.set(at, method);
                continue;
            }
            String slug = !requested.isEmpty() && !taken.contains(requested) ? requested : freshCustomSlug(taken);
            taken.add(slug);
            result.add(withSlug(method, slug));
        }
        return result;
    }

    /** How {@code authMethods} on an integration shows a method; {@code endpoint} is where OAuth is discovered. */
    public static Map<String, Object> describe(Map<String, Object> method, String endpoint) {
        String slug = slugOf(method);
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("id", slug);
        switch (String.valueOf(method.get("kind"))) {
            case "apikey" -> {
                described.put("label", apiKeyLabel(method, slug));
                described.put("kind", "apikey");
                described.put("template", slug);
                described.put("placements", placements(method).stream().map(AuthMethods::describePlacement).toList());
            }
            case "oauth2" -> {
                described.put("label", "OAuth");
                described.put("kind", "oauth");
                described.put("template", slug);
                Map<String, Object> oauth = new LinkedHashMap<>();
                oauth.put("discoveryUrl", endpoint);
                oauth.put("supportsDynamicRegistration", true);
                described.put("oauth", oauth);
            }
            default -> {
                described.put("label", "No authentication");
                described.put("kind", "none");
                described.put("template", slug);
            }
        }
        return described;
    }

    private static Map<String, Object> expandOne(Object value, String where) {
        if (!(value instanceof Map<?, ?> method)) {
            throw new InvalidAuthMethodException("`" + where + "` must be an object");
        }
        Object slug = method.get("slug");
        if (slug != null && !(slug instanceof String)) {
            throw new InvalidAuthMethodException("`" + where + ".slug` must be a string");
        }
        if ("apiKey".equals(method.get("type"))) {
            return apiKey(method, where);
        }
        Object kind = method.get("kind");
        if (!"none".equals(kind) && !"oauth2".equals(kind)) {
            throw new InvalidAuthMethodException("`" + where + "` must be { kind: \"none\" }, { kind: \"oauth2\" } or"
                    + " { type: \"apiKey\", headers?, queryParams? }");
        }
        for (Object key : method.keySet()) {
            if (!"slug".equals(key) && !"kind".equals(key)) {
                throw new InvalidAuthMethodException("`" + where + "." + key + "` is not a field of a " + kind + " method");
            }
        }
        Map<String, Object> canonical = new LinkedHashMap<>();
        if (slug != null) {
            canonical.put("slug", slug);
        }
        canonical.put("kind", kind);
        return canonical;
    }

    /** The request-shaped dialect to canonical placements: headers first, then query parameters. */
    private static Map<String, Object> apiKey(Map<?, ?> method, String where) {
        Object label = method.get("label");
        if (label != null && !(label instanceof String)) {
            throw new InvalidAuthMethodException("`" + where + ".label` must be a string");
        }
        for (Object key : method.keySet()) {
            if (!List.of("slug", "type", "label", "headers", "queryParams").contains(key)) {
                throw new InvalidAuthMethodException("`" + where + "." + key + "` is not a field of an apiKey method");
            }
        }
        List<Map<String, Object>> placements = new ArrayList<>();
        placements.addAll(placements("header", method.get("headers"), where + ".headers"));
        placements.addAll(placements("query", method.get("queryParams"), where + ".queryParams"));
        Map<String, Object> canonical = new LinkedHashMap<>();
        if (method.get("slug") != null) {
            canonical.put("slug", method.get("slug"));
        }
        canonical.put("kind", "apikey");
        if (label != null) {
            canonical.put("label", label);
        }
        canonical.put("placements", placements);
        return canonical;
    }

    private static List<Map<String, Object>> placements(String carrier, @Nullable Object values, String where) {
        if (values == null) {
            return List.of();
        }
        if (!(values instanceof Map<?, ?> entries)) {
            throw new InvalidAuthMethodException("`" + where + "` must be an object");
        }
        List<Map<String, Object>> placements = new ArrayList<>();
        entries.forEach((name, value) -> placements.add(placement(carrier, String.valueOf(name), value, where + "." + name)));
        return placements;
    }

    private static Map<String, Object> placement(String carrier, String name, Object value, String where) {
        Map<String, Object> placement = new LinkedHashMap<>();
        placement.put("carrier", carrier);
        placement.put("name", name);
        if (value instanceof String literal) {
            placement.put("literal", literal);
            return placement;
        }
        if (!(value instanceof List<?> parts)) {
            throw new InvalidAuthMethodException("`" + where + "` must be a string or an array of strings and one variable");
        }
        StringBuilder prefix = new StringBuilder();
        String variable = null;
        for (int i = 0; i < parts.size(); i++) {
            Object part = parts.get(i);
            if (part instanceof String text) {
                prefix.append(text);
            }
            else if (part instanceof Map<?, ?> named && "variable".equals(named.get("type")) && named.get("name") instanceof String variableName) {
                if (variable != null || i != parts.size() - 1) {
                    throw new InvalidAuthMethodException("`" + where + "`: a template value renders at most ONE variable, as the FINAL part");
                }
                variable = variableName;
            }
            else {
                throw new InvalidAuthMethodException("`" + where + "[" + i + "]` must be a string or { type: \"variable\", name }");
            }
        }
        if (variable == null) {
            placement.put("literal", prefix.toString());
            return placement;
        }
        if (!prefix.isEmpty()) {
            placement.put("prefix", prefix.toString());
        }
        if (!variable.equals(TOKEN)) {
            placement.put("variable", variable);
        }
        return placement;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> placements(Map<String, Object> method) {
        Object placements = method.get("placements");
        return placements instanceof List<?> list ? (List<Map<String, Object>>) list : List.of();
    }

    private static Map<String, Object> describePlacement(Map<String, Object> placement) {
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("carrier", placement.get("carrier"));
        described.put("name", placement.get("name"));
        described.put("prefix", placement.getOrDefault("prefix", ""));
        if (placement.containsKey("variable")) {
            described.put("variable", placement.get("variable"));
        }
        if (placement.containsKey("literal")) {
            described.put("literal", placement.get("literal"));
        }
        return described;
    }

    private static String apiKeyLabel(Map<String, Object> method, String slug) {
        if (method.get("label") instanceof String label && !label.isBlank()) {
            return label;
        }
        return placements(method).stream().map(p -> String.valueOf(p.get("name"))).filter(name -> !name.isBlank()).findFirst()
                .map(name -> "API key (" + name + ")").orElse("API key (" + slug + ")");
    }

    private static String defaultSlug(Map<String, Object> method) {
        if (!"apikey".equals(method.get("kind"))) {
            return String.valueOf(method.get("kind"));
        }
        List<Map<String, Object>> placements = placements(method);
        if (placements.size() == 1) {
            return "header".equals(placements.get(0).get("carrier")) ? "header" : "query";
        }
        return "apikey";
    }

    private static String slugOf(Map<String, Object> method) {
        return method.get("slug") instanceof String slug ? slug.trim() : "";
    }

    private static int indexOf(List<Map<String, Object>> methods, String slug) {
        for (int i = 0; i < methods.size(); i++) {
            if (slugOf(methods.get(i)).equals(slug)) {
                return i;
            }
        }
        return -1;
    }

    /** The method with {@code slug} first, as Executor writes {@code { ...method, slug }} over a slug-less input. */
    private static Map<String, Object> withSlug(Map<String, Object> method, String slug) {
        Map<String, Object> slugged = new LinkedHashMap<>();
        slugged.put("slug", slug);
        method.forEach((key, value) -> {
            if (!key.equals("slug")) {
                slugged.put(key, value);
            }
        });
        return slugged;
    }

    private static String freshCustomSlug(Set<String> taken) {
        String candidate;
        do {
            candidate = "custom_" + Long.toString(ThreadLocalRandom.current().nextLong(36L * 36 * 36 * 36 * 36, 36L * 36 * 36 * 36 * 36 * 36), 36);
        } while (taken.contains(candidate));
        return candidate;
    }
}
