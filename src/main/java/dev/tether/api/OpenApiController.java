package dev.tether.api;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.api.input.Bounds;
import dev.tether.api.input.Inputs;
import dev.tether.api.input.InvalidInputException;
import dev.tether.api.input.ServerConfigs;
import dev.tether.api.input.Slugs;
import dev.tether.calls.builtin.BuiltinHandler;
import dev.tether.calls.builtin.BuiltinHandlers;
import dev.tether.http.BodyBytes;
import dev.tether.http.HttpProperties;
import dev.tether.openapi.OpenApiExtractionException;
import dev.tether.openapi.OpenApiParseException;
import dev.tether.openapi.OpenApiSources;
import dev.tether.openapi.OpenApiSources.AddSpec;
import dev.tether.openapi.OpenApiSources.SpecInput;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.Integration;

/**
 * Executor's {@code /api/openapi} routes: preview a spec, add it as an integration, read, configure and remove one.
 * Bodies carry whole specs, so they are read here with a bound of their own ({@code tether.http.max-document-size},
 * twice over for JSON escaping) rather than the codecs' 256 KB: a spec over it is an {@code OpenApiParseError}.
 */
@RestController
@RequestMapping("/api/openapi")
final class OpenApiController implements BuiltinHandlers {

    /** Executor's OpenAPI integration: what {@code GET /api/openapi/integrations/{slug}} answers. */
    record SourceView(String slug, String description, String kind, boolean canRemove, boolean canRefresh) {
    }

    private final OpenApiSources sources;
    private final JsonMapper json;
    private final BuiltinArguments arguments;
    private final int maxBody;

    OpenApiController(OpenApiSources sources, JsonMapper json, BuiltinArguments arguments, HttpProperties http) {
        this.sources = sources;
        this.json = json;
        this.arguments = arguments;
        this.maxBody = (int) Math.min(Integer.MAX_VALUE - 8, 2 * http.maxDocumentSize().toBytes());
    }

    /** The built-ins {@code executor.openapi.previewSpec} and {@code addSpec}: the routes' twins, with Executor's failure codes. */
    @Override
    public Map<String, BuiltinHandler> handlers() {
        return Map.of(
                // Executor's built-in preview leaves out the operations its route lists.
                "executor.openapi.previewSpec", (tool, args) -> named(arguments.run(tool, args, BODY, this::outline)),
                "executor.openapi.addSpec", (tool, args) -> named(arguments.run(tool, args, BODY, this::add)));
    }

    @SuppressWarnings({ "unchecked", "rawtypes" })
    private static final Class<Map<String, Object>> BODY = (Class) Map.class;

    private Mono<Map<String, Object>> outline(Map<String, Object> body) {
        return preview(body).map(preview -> {
            Map<String, Object> outline = new LinkedHashMap<>(preview);
            outline.remove("operations");
            return outline;
        });
    }

    private static Mono<Object> named(Mono<Object> call) {
        return BuiltinArguments.naming(call, OpenApiParseException.class, "openapi_parse_failed",
                OpenApiExtractionException.class, "openapi_extraction_failed");
    }

    @PostMapping("/preview")
    @SuppressWarnings("unchecked")
    Mono<Map<String, Object>> preview(ServerWebExchange exchange) {
        return body(exchange).flatMap(this::preview).map(preview -> (Map<String, Object>) absentOptionalsLeftOut(preview));
    }

    private Mono<Map<String, Object>> preview(Map<String, Object> body) {
        return sources.preview(requiredText(body, "spec", Integer.MAX_VALUE).strip());
    }

    /**
     * Executor 1.5.9's route leaves out an absent optional (a title, a summary, a server's description) where its
     * built-in answers {@code null}; a header preset's {@code null} value is kept: it means "the user gives it".
     */
    @SuppressWarnings("unchecked")
    private static Object absentOptionalsLeftOut(Object value) {
        if (value instanceof List<?> list) {
            return list.stream().map(OpenApiController::absentOptionalsLeftOut).toList();
        }
        if (!(value instanceof Map<?, ?> map)) {
            return value;
        }
        Map<String, Object> kept = new LinkedHashMap<>();
        ((Map<String, Object>) map).forEach((key, field) -> {
            if (key.equals("headers") && field instanceof Map<?, ?>) {
                kept.put(key, field);
            }
            else if (field != null) {
                kept.put(key, absentOptionalsLeftOut(field));
            }
        });
        return kept;
    }

    @PostMapping("/specs")
    Mono<Map<String, Object>> add(ServerWebExchange exchange) {
        return body(exchange).flatMap(this::add);
    }

    private Mono<Map<String, Object>> add(Map<String, Object> body) {
        return Mono.fromCallable(() -> addSpec(body)).flatMap(sources::add);
    }

    /** As in Executor 1.5.9: an unknown slug answers {@code null}. */
    @GetMapping("/integrations/{slug}")
    Mono<Optional<SourceView>> get(@PathVariable String slug) {
        Bounds.check("slug", slug);
        return sources.find(slug).map(found -> new SourceView(found.slug(), found.description(), "openapi", true,
                        ((HttpSourceConfig) found.config()).settings().get("sourceUrl") != null))
                .map(Optional::of).defaultIfEmpty(Optional.empty());
    }

    /** Executor answers nothing; removing what is not there is no error. */
    @DeleteMapping("/integrations/{slug}")
    Mono<Void> remove(@PathVariable String slug) {
        Bounds.check("slug", slug);
        return sources.remove(slug).then();
    }

    @GetMapping("/integrations/{slug}/config")
    Mono<Optional<Map<String, Object>>> config(@PathVariable String slug) {
        Bounds.check("slug", slug);
        return sources.find(slug).map(OpenApiController::configView).map(Optional::of).defaultIfEmpty(Optional.empty());
    }

    @PostMapping("/integrations/{slug}/config")
    Mono<Map<String, Object>> configure(@PathVariable String slug, ServerWebExchange exchange) {
        Bounds.check("slug", slug);
        return body(exchange).flatMap(body -> {
            if (!(body.get("authenticationTemplate") instanceof List<?> template)) {
                throw InvalidInputException.decode("`authenticationTemplate` is required and must be a list");
            }
            Object mode = body.get("mode");
            if (mode != null && !"merge".equals(mode) && !"replace".equals(mode)) {
                throw InvalidInputException.decode("`mode` must be \"merge\" or \"replace\"");
            }
            return sources.configure(slug, template, "replace".equals(mode)).defaultIfEmpty(List.of())
                    .map(stored -> Map.<String, Object>of("authenticationTemplate", stored));
        });
    }

    /**
     * The stored config without secrets: which headers and query values are set, never what they hold. As Executor
     * 1.5.9's route, every field is there, {@code null} when unset.
     */
    private static Map<String, Object> configView(Integration integration) {
        HttpSourceConfig config = (HttpSourceConfig) integration.config();
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("sourceUrl", config.settings().get("sourceUrl"));
        view.put("googleDiscoveryUrls", config.settings().get("googleDiscoveryUrls"));
        view.put("baseUrl", config.settings().get("baseUrl"));
        view.put("headers", config.headers().isEmpty() ? null : masked(config.headers()));
        view.put("queryParams", config.queryParams().isEmpty() ? null : masked(config.queryParams()));
        view.put("authenticationTemplate", config.settings().get("authenticationTemplate") instanceof List<?> template ? template : null);
        return view;
    }

    private static Map<String, String> masked(Map<String, String> values) {
        Map<String, String> masked = new TreeMap<>();
        values.keySet().forEach(key -> masked.put(key, ServerConfigs.MASK));
        return masked;
    }

    @SuppressWarnings("unchecked")
    private AddSpec addSpec(Map<String, Object> body) {
        for (String field : body.keySet()) {
            if (!List.of("spec", "slug", "description", "baseUrl", "headers", "queryParams", "authenticationTemplate").contains(field)) {
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

    private OpenApiParseException tooLarge() {
        return new OpenApiParseException("The request is larger than the " + maxBody
                + " bytes Tether reads (tether.http.max-document-size, twice over)");
    }

    /** The body as a JSON object, read up to the bound; an over-long body is a spec too large to read. */
    @SuppressWarnings("unchecked")
    private Mono<Map<String, Object>> body(ServerWebExchange exchange) {
        if (exchange.getRequest().getHeaders().getContentLength() > maxBody) {
            // Refused before reading: the client sends no more than the server has to discard.
            return Mono.error(tooLarge());
        }
        return BodyBytes.read(exchange.getRequest().getBody(), maxBody)
                .onErrorMap(DataBufferLimitException.class, tooLarge -> tooLarge())
                .switchIfEmpty(Mono.error(() -> InvalidInputException.decode("the request has no body")))
                .map(bytes -> {
                    Object parsed;
                    try {
                        parsed = json.readValue(bytes, Object.class);
                    }
                    catch (JacksonException notJson) {
                        throw InvalidInputException.decode("the body is not valid JSON: " + notJson.getOriginalMessage());
                    }
                    if (!(parsed instanceof Map<?, ?> map)) {
                        throw InvalidInputException.decode("the body must be a JSON object");
                    }
                    return (Map<String, Object>) map;
                });
    }
}
