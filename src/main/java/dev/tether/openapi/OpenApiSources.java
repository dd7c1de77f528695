package dev.tether.openapi;

import java.net.URI;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.tether.catalog.CatalogService;
import dev.tether.http.AuthTemplates;
import dev.tether.http.HttpSourceClient;
import dev.tether.http.UpstreamException;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationStore;
import dev.tether.store.StoredTool;

/**
 * OpenAPI sources: a spec (fetched from the address given, or pasted) becomes an integration whose operations are
 * its tools. Everything is read and checked before anything is stored; an integration is stored whole or not at all.
 */
@Service
public final class OpenApiSources {

    private static final Set<String> OAUTH_KEYS = new java.util.LinkedHashSet<>(List.of("authorizationUrl", "tokenUrl", "scopes"));

    /**
     * Where a spec comes from: its address, or its text; {@code discovery} when it is given as a Google Discovery
     * document (one is also recognised by its {@code kind}, wherever it comes from).
     */
    public record SpecInput(@Nullable String url, @Nullable String text, boolean discovery) {

        public SpecInput(@Nullable String url, @Nullable String text) {
            this(url, text, false);
        }
    }

    /** A spec read: the document, and the conversion when it was a Discovery document. */
    private record Read(Map<String, Object> doc, GoogleDiscovery.@Nullable Conversion discovery) {
    }

    /** What {@code addSpec} takes. */
    public record AddSpec(SpecInput spec, String slug, @Nullable String description, @Nullable String baseUrl,
            Map<String, String> headers, Map<String, String> queryParams, @Nullable List<?> authenticationTemplate) {

        public AddSpec(SpecInput spec, String slug, @Nullable String description, @Nullable String baseUrl,
                @Nullable Map<String, String> headers, @Nullable Map<String, String> queryParams,
                @Nullable List<?> authenticationTemplate) {
            this.spec = spec;
            this.slug = slug;
            this.description = description;
            this.baseUrl = baseUrl;
            this.headers = headers == null ? Map.of() : headers;
            this.queryParams = queryParams == null ? Map.of() : queryParams;
            this.authenticationTemplate = authenticationTemplate;
        }
    }

    private final IntegrationStore integrations;
    private final CatalogService catalogs;
    private final HttpSourceClient http;
    private final Clock clock;

    public OpenApiSources(IntegrationStore integrations, CatalogService catalogs, HttpSourceClient http, Clock clock) {
        this.integrations = integrations;
        this.catalogs = catalogs;
        this.http = http;
        this.clock = clock;
    }

    /** What a spec holds, without storing anything: {@code spec} is an address to fetch or the spec's text. */
    public Mono<Map<String, Object>> preview(String spec) {
        boolean address = spec.startsWith("http://") || spec.startsWith("https://");
        return document(new SpecInput(address ? spec : null, address ? null : spec))
                .map(read -> OpenApiPreview.of(read.doc(), OpenApiExtraction.extract(read.doc())));
    }

    /** Adds the spec as an integration with one tool per operation; answers the slug and the tool count. */
    public Mono<Map<String, Object>> add(AddSpec request) {
        return document(request.spec()).map(read -> {
                    Map<String, Object> doc = read.doc();
                    OpenApiExtraction.Extracted extracted = OpenApiExtraction.extract(doc);
                    // As Executor: a Discovery API given no template declares Google's OAuth with the document's scopes.
                    List<Map<String, Object>> templates = request.authenticationTemplate() != null
                            ? AuthTemplates.normalize(request.authenticationTemplate(), OAUTH_KEYS)
                            : read.discovery() != null ? AuthTemplates.normalize(read.discovery().authenticationTemplate(), OAUTH_KEYS)
                            : OpenApiPreview.derivedTemplates(doc);
                    Map<String, Object> settings = new LinkedHashMap<>();
                    if (request.spec().url() != null) {
                        settings.put("sourceUrl", request.spec().url());
                    }
                    if (request.baseUrl() != null && !request.baseUrl().isBlank()) {
                        settings.put("baseUrl", request.baseUrl());
                    }
                    settings.put("authenticationTemplate", templates);
                    List<StoredTool> tools = new ArrayList<>();
                    Map<String, Map<String, Object>> operations = new LinkedHashMap<>();
                    for (OpenApiExtraction.Operation operation : extracted.byToolPath()) {
                        tools.add(operation.tool());
                        operations.put(operation.tool().name(), operation.binding());
                    }
                    HttpSourceConfig config = new HttpSourceConfig(HttpSourceConfig.OPENAPI, settings, request.headers(),
                            request.queryParams(), tools, operations);
                    String title = extracted.title();
                    String description = request.description() != null ? request.description() : title != null ? title : request.slug();
                    return new Integration(request.slug(), title != null ? title : request.slug(), description, config, clock.instant());
                })
                .flatMap(integrations::create)
                .flatMap(created -> catalogs.changed(created.slug()).thenReturn(added(created)));
    }

    private static Map<String, Object> added(Integration created) {
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("slug", created.slug());
        answer.put("toolCount", ((HttpSourceConfig) created.config()).tools().size());
        return answer;
    }

    /** The OpenAPI integration with this slug; empty when there is none, or it is not an OpenAPI one. */
    public Mono<Integration> find(String slug) {
        return integrations.find(slug).filter(OpenApiSources::isOpenApi);
    }

    /** Removes the integration, its connections and catalogs; emits whether there was one. */
    public Mono<Boolean> remove(String slug) {
        return find(slug).flatMap(found -> integrations.delete(slug)).flatMap(removed -> catalogs.changed(slug).thenReturn(removed))
                .defaultIfEmpty(false);
    }

    /**
     * Replaces ({@code replace}) or merges into ({@code merge}, the default) the authentication template; answers the
     * template now stored, empty when there is no such OpenAPI integration.
     */
    public Mono<List<Map<String, Object>>> configure(String slug, List<?> template, boolean replace) {
        return find(slug).flatMap(found -> {
            HttpSourceConfig config = (HttpSourceConfig) found.config();
            List<Map<String, Object>> next = AuthTemplates.configure(config.authenticationTemplate(), template, replace, OAUTH_KEYS);
            return integrations.update(found.withConfig(config.withAuthenticationTemplate(next), found.configChangedAt())).thenReturn(next);
        });
    }


    static boolean isOpenApi(Integration integration) {
        return integration.config() instanceof HttpSourceConfig source && source.kind().equals(HttpSourceConfig.OPENAPI);
    }

    /**
     * The spec as a document: fetched when given by address; a Discovery document converted first; parsed off the
     * event loops (large specs take a while).
     */
    private Mono<Read> document(SpecInput spec) {
        Mono<String> text = spec.url() != null ? fetch(spec.url()) : Mono.justOrEmpty(spec.text())
                .switchIfEmpty(Mono.error(() -> new OpenApiParseException("The spec is empty")));
        return text.publishOn(Schedulers.boundedElastic()).map(source -> {
            if (spec.discovery() || GoogleDiscovery.recognises(source)) {
                OpenApiDocuments.checkSize(source, http.maxDocumentBytes());
                GoogleDiscovery.Conversion conversion = GoogleDiscovery.convert(source, spec.url());
                return new Read(OpenApiDocuments.parse(conversion.specText(), http.maxDocumentBytes()), conversion);
            }
            return new Read(OpenApiDocuments.parse(source, http.maxDocumentBytes()), null);
        });
    }

    private Mono<String> fetch(String url) {
        URI uri;
        try {
            uri = URI.create(url);
        }
        catch (IllegalArgumentException bad) {
            return Mono.error(new OpenApiParseException("The spec address is not a valid URL: " + url));
        }
        return http.fetchDocument(uri, Map.of("Accept", "application/json, application/yaml, text/yaml, */*;q=0.5"))
                .onErrorMap(UpstreamException.class, failed -> new OpenApiParseException("The spec could not be fetched: " + failed.getMessage(), failed))
                .flatMap(answer -> answer.ok() ? Mono.just(answer.text())
                        : Mono.error(new OpenApiParseException("The spec could not be fetched: " + HttpSourceClient.redacted(uri)
                                + " answered HTTP " + answer.status())));
    }
}
