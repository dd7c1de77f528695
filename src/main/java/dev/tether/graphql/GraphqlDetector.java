package dev.tether.graphql;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Map;
import java.util.regex.Pattern;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.detect.Detection;
import dev.tether.detect.IntegrationDetector;

/**
 * Recognises a GraphQL endpoint as Executor's GraphQL plugin does: one that answers introspection is one (high);
 * failing that (introspection disabled, authentication needed), a URL whose host or path holds the word
 * {@code graphql} is a low-confidence guess.
 */
@Component
@Order(IntegrationDetector.GRAPHQL)
final class GraphqlDetector implements IntegrationDetector {

    private static final Pattern GRAPHQL_TOKEN = Pattern.compile("(?:^|[^a-z0-9])graphql(?:$|[^a-z0-9])", Pattern.CASE_INSENSITIVE);

    private final GraphqlSources sources;

    GraphqlDetector(GraphqlSources sources) {
        this.sources = sources;
    }

    @Override
    public Mono<Detection> detect(String url) {
        URI uri;
        try {
            uri = new URI(url);
        }
        catch (URISyntaxException notAUrl) {
            return Mono.empty();
        }
        if (!uri.isAbsolute()) {
            return Mono.empty();
        }
        String slug = GraphqlSources.slugFor(url);
        boolean web = "http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme());
        Mono<Boolean> introspects = web ? sources.introspect(url, Map.of(), Map.of()).thenReturn(true).onErrorReturn(false)
                : Mono.just(false);
        return introspects.flatMap(answered -> answered ? Mono.just(new Detection("graphql", "high", url, slug, slug))
                : named(uri) ? Mono.just(new Detection("graphql", "low", url, slug, slug)) : Mono.empty());
    }

    private static boolean named(URI uri) {
        return GRAPHQL_TOKEN.matcher(uri.getHost() == null ? "" : uri.getHost()).find()
                || GRAPHQL_TOKEN.matcher(uri.getRawPath() == null ? "" : uri.getRawPath()).find();
    }
}
