package dev.tether.openapi;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.calls.builtin.BuiltinArguments;
import dev.tether.calls.builtin.BuiltinHandler;
import dev.tether.calls.builtin.BuiltinHandlers;

/**
 * The built-ins {@code executor.openapi.previewSpec} and {@code addSpec}: twins of {@code POST /api/openapi/preview}
 * and {@code /specs}, their arguments checked as the routes' bodies ({@link OpenApiRequests}), with Executor's
 * failure codes.
 */
@Component
final class OpenApiBuiltins implements BuiltinHandlers {

    @SuppressWarnings({ "unchecked", "rawtypes" })
    private static final Class<Map<String, Object>> BODY = (Class) Map.class;

    private final OpenApiSources sources;
    private final BuiltinArguments arguments;

    OpenApiBuiltins(OpenApiSources sources, BuiltinArguments arguments) {
        this.sources = sources;
        this.arguments = arguments;
    }

    @Override
    public Map<String, BuiltinHandler> handlers() {
        return Map.of(
                // Executor's built-in preview leaves out the operations its route lists.
                "executor.openapi.previewSpec", (tool, args) -> named(arguments.run(tool, args, BODY, body ->
                        sources.preview(OpenApiRequests.previewed(body)).map(preview -> {
                            Map<String, Object> outline = new LinkedHashMap<>(preview);
                            outline.remove("operations");
                            return outline;
                        }))),
                "executor.openapi.addSpec", (tool, args) -> named(arguments.run(tool, args, BODY, body ->
                        Mono.fromCallable(() -> OpenApiRequests.added(body)).flatMap(sources::add))));
    }

    private static Mono<Object> named(Mono<Object> call) {
        return BuiltinArguments.naming(call, OpenApiParseException.class, "openapi_parse_failed",
                OpenApiExtractionException.class, "openapi_extraction_failed");
    }
}
