package dev.tether.graphql;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import graphql.introspection.IntrospectionQuery;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpMethod;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.catalog.CatalogService;
import dev.tether.http.AuthTemplates;
import dev.tether.http.HttpAnswer;
import dev.tether.http.HttpSourceClient;
import dev.tether.http.UpstreamException;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationStore;
import dev.tether.store.StoredTool;

/**
 * GraphQL sources: an endpoint, introspected when it is added (or its introspection answer given as JSON), becomes
 * an integration whose root query and mutation fields are tools. An endpoint that does not answer introspection as a
 * GraphQL server is refused and nothing is stored.
 */
@Service
public final class GraphqlSources {

    private static final Set<String> OAUTH_KEYS = new java.util.LinkedHashSet<>(List.of("header", "prefix"));

    /** What {@code addIntegration} takes. */
    public record AddIntegration(String endpoint, @Nullable String slug, @Nullable String name,
            @Nullable String introspectionJson, Map<String, String> headers, Map<String, String> queryParams,
            @Nullable List<?> authenticationTemplate) {

        public AddIntegration {
            headers = headers == null ? Map.of() : headers;
            queryParams = queryParams == null ? Map.of() : queryParams;
        }
    }

    private final IntegrationStore integrations;
    private final CatalogService catalogs;
    private final HttpSourceClient http;
    private final JsonMapper json;
    private final Clock clock;

    public GraphqlSources(IntegrationStore integrations, CatalogService catalogs, HttpSourceClient http, JsonMapper json, Clock clock) {
        this.integrations = integrations;
        this.catalogs = catalogs;
        this.http = http;
        this.json = json;
        this.clock = clock;
    }

    /** Executor's slug for an endpoint: its host name, runs of other characters as {@code _}. */
    public static String slugFor(String endpoint) {
        try {
            String host = URI.create(endpoint).getHost();
            return host == null ? "graphql" : host.replaceAll("[^a-zA-Z0-9]+", "_").toLowerCase(Locale.ROOT);
        }
        catch (IllegalArgumentException bad) {
            return "graphql";
        }
    }

    /** Introspects (or reads the given answer), makes the tools and stores the integration; answers its slug and name. */
    public Mono<Map<String, Object>> add(AddIntegration request) {
        String slug = request.slug() != null ? request.slug() : slugFor(request.endpoint());
        String name = request.name() != null && !request.name().isBlank() ? request.name().strip() : slugFor(request.endpoint());
        List<Map<String, Object>> templates = request.authenticationTemplate() == null ? List.of()
                : AuthTemplates.normalize(request.authenticationTemplate(), OAUTH_KEYS);
        String introspectionJson = request.introspectionJson();
        Mono<Map<String, Object>> introspection = introspectionJson != null
                ? Mono.fromCallable(() -> parse(introspectionJson.getBytes(StandardCharsets.UTF_8), "the given introspection JSON"))
                : introspect(request.endpoint(), request.headers(), request.queryParams());
        return introspection.publishOn(Schedulers.boundedElastic())
                .map(GraphqlOperations::of)
                .map(operations -> {
                    Map<String, Object> settings = new LinkedHashMap<>();
                    settings.put("endpoint", request.endpoint());
                    settings.put("name", name);
                    settings.put("authenticationTemplate", templates);
                    List<StoredTool> tools = new ArrayList<>();
                    Map<String, Map<String, Object>> bindings = new LinkedHashMap<>();
                    operations.forEach(operation -> {
                        tools.add(operation.tool());
                        bindings.put(operation.tool().name(), operation.binding());
                    });
                    HttpSourceConfig config = new HttpSourceConfig(HttpSourceConfig.GRAPHQL, settings, request.headers(),
                            request.queryParams(), tools, bindings);
                    return new Integration(slug, name, name, config, clock.instant());
                })
                .flatMap(integrations::create)
                .flatMap(created -> catalogs.changed(created.slug()).thenReturn(answer(created.slug(), name)));
    }

    private static Map<String, Object> answer(String slug, String name) {
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("slug", slug);
        answer.put("name", name);
        return answer;
    }

    /** The GraphQL integration with this slug; empty when there is none, or it is not a GraphQL one. */
    public Mono<Integration> find(String slug) {
        return integrations.find(slug).filter(GraphqlSources::isGraphql);
    }

    /** Replaces or merges the authentication template; empty when there is no such GraphQL integration. */
    public Mono<List<Map<String, Object>>> configure(String slug, List<?> template, boolean replace) {
        return find(slug).flatMap(found -> {
            HttpSourceConfig config = (HttpSourceConfig) found.config();
            List<Map<String, Object>> next = AuthTemplates.configure(config.authenticationTemplate(), template, replace, OAUTH_KEYS);
            return integrations.update(found.withConfig(config.withAuthenticationTemplate(next), found.configChangedAt())).thenReturn(next);
        });
    }


    static boolean isGraphql(Integration integration) {
        return integration.config() instanceof HttpSourceConfig source && source.kind().equals(HttpSourceConfig.GRAPHQL);
    }

    /** The endpoint's introspection answer; fails with {@link GraphqlIntrospectionException} when it gives none a GraphQL server would. */
    Mono<Map<String, Object>> introspect(String endpoint, Map<String, String> headers, Map<String, String> queryParams) {
        return Mono.defer(() -> {
            URI uri = GraphqlTools.withQuery(URI.create(endpoint), queryParams);
            Map<String, String> sent = new LinkedHashMap<>(headers);
            sent.put("Content-Type", "application/json");
            sent.put("Accept", "application/graphql-response+json, application/json");
            byte[] body = json.writeValueAsBytes(Map.of("query", IntrospectionQuery.INTROSPECTION_QUERY));
            return http.exchangeDocument(HttpMethod.POST, uri, sent, body)
                    .onErrorMap(UpstreamException.class, failed -> new GraphqlIntrospectionException(
                            "Failed to reach GraphQL endpoint: " + failed.getMessage(), failed))
                    .map(answer -> introspection(answer, uri));
        });
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> introspection(HttpAnswer answer, URI uri) {
        String where = HttpSourceClient.redacted(uri);
        if (!answer.json()) {
            throw new GraphqlIntrospectionException("Not a GraphQL endpoint: " + where + " answered HTTP " + answer.status()
                    + " with " + (answer.mediaType().isEmpty() ? "no media type" : answer.mediaType()) + ", not JSON");
        }
        Map<String, Object> parsed = parse(answer.body(), where + "'s answer");
        if (parsed.get("errors") instanceof List<?> errors && !errors.isEmpty() && parsed.get("data") == null) {
            Object first = errors.get(0);
            String message = first instanceof Map<?, ?> error && error.get("message") instanceof String m ? m : String.valueOf(first);
            throw new GraphqlIntrospectionException("Introspection failed: " + message);
        }
        if (!answer.ok()) {
            throw new GraphqlIntrospectionException("Introspection failed: " + where + " answered HTTP " + answer.status());
        }
        if (!(parsed.get("data") instanceof Map<?, ?> data) || !(data.get("__schema") instanceof Map<?, ?>)) {
            throw new GraphqlIntrospectionException("Not a GraphQL endpoint: " + where + " answered JSON without data.__schema");
        }
        return (Map<String, Object>) parsed;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> parse(byte[] bytes, String what) {
        if (bytes.length > http.maxDocumentBytes()) {
            throw new GraphqlIntrospectionException(what + " is larger than the " + http.maxDocumentBytes() + " bytes Tether reads");
        }
        try {
            Object parsed = json.readValue(bytes, Object.class);
            if (parsed instanceof Map<?, ?> map) {
                return (Map<String, Object>) map;
            }
        }
        catch (JacksonException notJson) {
            throw new GraphqlIntrospectionException(what + " is not JSON: " + notJson.getOriginalMessage(), notJson);
        }
        throw new GraphqlIntrospectionException(what + " is not a JSON object");
    }
}
