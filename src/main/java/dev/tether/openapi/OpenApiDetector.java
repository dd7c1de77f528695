package dev.tether.openapi;

import java.util.Locale;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.detect.Detection;
import dev.tether.detect.IntegrationDetector;

/**
 * Recognises an OpenAPI spec as Executor's OpenAPI plugin does: a URL whose answer parses as a spec Tether can make
 * tools of is one (high), named after the spec's title; anything else is not. A Google Discovery document is one
 * too, named after its title, wherever it is served (Executor recognises only those on googleapis.com).
 */
@Component
@Order(IntegrationDetector.OPENAPI)
final class OpenApiDetector implements IntegrationDetector {

    private final OpenApiSources sources;

    OpenApiDetector(OpenApiSources sources) {
        this.sources = sources;
    }

    @Override
    public Mono<Detection> detect(String url) {
        if (!url.startsWith("http://") && !url.startsWith("https://")) {
            return Mono.empty();
        }
        return sources.preview(url).map(preview -> {
            String title = preview.get("title") instanceof String text && !text.isEmpty() ? text : null;
            // As Executor: the title lower-cased, runs of anything else as '_' (ends included), "api" without a title.
            String slug = (title == null ? "api" : title).toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_");
            return new Detection("openapi", "high", url, title == null ? slug : title, slug);
        }).onErrorResume(notASpec -> Mono.empty());
    }
}
