package dev.tether.openapi;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.tether.api.input.Bounds;
import dev.tether.api.input.Inputs;
import dev.tether.api.input.InvalidInputException;
import dev.tether.api.input.ServerConfigs;
import dev.tether.api.input.Slugs;
import dev.tether.openapi.OpenApiSources.AddSpec;
import dev.tether.openapi.OpenApiSources.SpecInput;

/**
 * The bodies of Executor's OpenAPI routes that built-ins are twins of ({@code POST /api/openapi/preview} and
 * {@code /specs}), JSON objects checked as the routes check them: the controller ({@code api.OpenApiController})
 * reads them from HTTP, {@link OpenApiBuiltins} from a built-in's arguments. A wrong field is an
 * {@link InvalidInputException} naming it.
 */
public final class OpenApiRequests {

    private static final List<String> ADD_FIELDS = List.of("spec", "slug", "description", "baseUrl", "headers", "queryParams",
            "authenticationTemplate");

    private OpenApiRequests() {
    }

    /** The spec a preview body carries. */
    public static String previewed(Map<String, Object> body) {
        return requiredText(body, "spec", Integer.MAX_VALUE).strip();
    }

    /** The spec to add, from an add body. */
    @SuppressWarnings("unchecked")
    public static AddSpec added(Map<String, Object> body) {
        for (String field : body.keySet()) {
            if (!ADD_FIELDS.contains(field)) {
                throw InvalidInputException.decode("`" + field + "` is not a field of an OpenAPI spec to add");
            }
        }
        if (!(body.get("spec") instanceof Map<?, ?> spec)) {
            throw InvalidInputException.decode("`spec` is required: {kind: \"url\", url} or {kind: \"blob\", value}");
        }
        SpecInput input = switch (String.valueOf(spec.get("kind"))) {
            case "url" -> new SpecInput(httpUrl(requiredText((Map<String, Object>) spec, "url", Bounds.PATH), "spec.url"), null);
            case "blob" -> new SpecInput(null, requiredText((Map<String, Object>) spec, "value", Integer.MAX_VALUE));
            case "googleDiscovery" -> new SpecInput(httpUrl(requiredText((Map<String, Object>) spec, "url", Bounds.PATH), "spec.url"),
                    null, true);
            case "googleDiscoveryBundle" -> throw new OpenApiParseException(
                    "Google Discovery bundles are not supported by Tether; add each API by its Discovery document's URL");
            default -> throw InvalidInputException.decode("`spec.kind` must be \"url\", \"blob\", \"googleDiscovery\" or \"googleDiscoveryBundle\"");
        };
        String slug = Slugs.check(requiredText(body, "slug", Bounds.NAME));
        String baseUrl = text(body, "baseUrl", false, Bounds.PATH);
        // The UI sends "" when its "Base URL override" is left empty, which Executor reads as no override.
        if (baseUrl != null && baseUrl.isBlank()) {
            baseUrl = null;
        }
        if (baseUrl != null) {
            httpUrl(baseUrl, "baseUrl");
        }
        Object template = body.get("authenticationTemplate");
        if (template != null && !(template instanceof List<?>)) {
            throw InvalidInputException.decode("`authenticationTemplate` must be a list");
        }
        return new AddSpec(input, slug, text(body, "description", false, Bounds.TEXT), baseUrl,
                Inputs.headerMap(strings(body, "headers"), "headers"), Inputs.stringMap(strings(body, "queryParams"), "queryParams"),
                (List<?>) template);
    }

    private static String httpUrl(String url, String field) {
        try {
            ServerConfigs.checkHttpUrl(url);
        }
        catch (InvalidInputException bad) {
            throw InvalidInputException.decode("`" + field + "` must be an http(s) URL, was \"" + url + "\"");
        }
        return url;
    }

    @SuppressWarnings("unchecked")
    private static @Nullable Map<String, String> strings(Map<String, Object> body, String field) {
        Object value = body.get(field);
        if (value == null) {
            return null;
        }
        if (!(value instanceof Map<?, ?> map) || map.values().stream().anyMatch(v -> !(v instanceof String))) {
            throw InvalidInputException.decode("`" + field + "` must map names to strings");
        }
        Map<String, String> strings = (Map<String, String>) map;
        if (strings.size() > Bounds.ENTRIES) {
            throw InvalidInputException.decode("`" + field + "` may have at most " + Bounds.ENTRIES + " entries");
        }
        strings.forEach((name, text) -> {
            Bounds.check("headers", text);
            Bounds.check("name", name);
        });
        return strings;
    }

    private static String requiredText(Map<String, Object> body, String field, int limit) {
        return Objects.requireNonNull(text(body, field, true, limit));
    }

    private static @Nullable String text(Map<String, Object> body, String field, boolean required, int limit) {
        Object value = body.get(field);
        if (value == null) {
            if (required) {
                throw InvalidInputException.decode("`" + field + "` is required");
            }
            return null;
        }
        if (!(value instanceof String text)) {
            throw InvalidInputException.decode("`" + field + "` must be a string");
        }
        if (text.length() > limit) {
            throw InvalidInputException.decode("`" + field + "` may be at most " + limit + " characters, was " + text.length());
        }
        return text;
    }
}
