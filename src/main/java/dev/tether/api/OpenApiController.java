package dev.tether.api;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

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
import dev.tether.api.input.InvalidInputException;
import dev.tether.api.input.ServerConfigs;
import dev.tether.http.BodyBytes;
import dev.tether.http.HttpProperties;
import dev.tether.openapi.OpenApiParseException;
import dev.tether.openapi.OpenApiRequests;
import dev.tether.openapi.OpenApiSources;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.Integration;

/**
 * Executor's {@code /api/openapi} routes: preview a spec, add it as an integration, read, configure and remove one.
 * Bodies carry whole specs, so they are read here with a bound of their own ({@code tether.http.max-document-size},
 * twice over for JSON escaping) rather than the codecs' 256 KB: a spec over it is an {@code OpenApiParseError}. The
 * built-ins that are twins of the preview and add routes are {@code openapi.OpenApiBuiltins}; both check the bodies
 * alike ({@code openapi.OpenApiRequests}).
 */
@RestController
@RequestMapping("/api/openapi")
final class OpenApiController {

    /** Executor's OpenAPI integration: what {@code GET /api/openapi/integrations/{slug}} answers. */
    record SourceView(String slug, String description, String kind, boolean canRemove, boolean canRefresh) {
    }

    private final OpenApiSources sources;
    private final JsonMapper json;
    private final int maxBody;

    OpenApiController(OpenApiSources sources, JsonMapper json, HttpProperties http) {
        this.sources = sources;
        this.json = json;
        this.maxBody = (int) Math.min(Integer.MAX_VALUE - 8, 2 * http.maxDocumentSize().toBytes());
    }

    @PostMapping("/preview")
    @SuppressWarnings("unchecked")
    Mono<Map<String, Object>> preview(ServerWebExchange exchange) {
        return body(exchange).flatMap(body -> sources.preview(OpenApiRequests.previewed(body)))
                .map(preview -> (Map<String, Object>) absentOptionalsLeftOut(preview));
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
        return body(exchange).flatMap(body -> Mono.fromCallable(() -> OpenApiRequests.added(body)).flatMap(sources::add));
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
        view.put("headers", config.headers().isEmpty() ? null : ServerConfigs.masked(config.headers()));
        view.put("queryParams", config.queryParams().isEmpty() ? null : ServerConfigs.masked(config.queryParams()));
        view.put("authenticationTemplate", config.settings().get("authenticationTemplate") instanceof List<?> template ? template : null);
        return view;
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
