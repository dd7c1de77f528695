package dev.tether.store;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * An integration whose tools are HTTP requests described by a document: an OpenAPI spec or a GraphQL schema. Its
 * tools are the same for every connection, so they are kept here, made once when the source was added; a
 * connection's catalog is a copy of them.
 *
 * @param kind        {@code openapi} or {@code graphql}, Executor's integration kind
 * @param settings    what the source's routes give back as its config, without secrets (source URL, base URL or
 *                    endpoint, name, the authentication template as Executor stores it)
 * @param headers     added to every request; values may be secrets, sealed at rest and never shown
 * @param queryParams added to every request; sealed like headers
 * @param tools       the tools made from the document, named as their addresses name them ({@code group.leaf})
 * @param operations  how to make each tool's request, by tool name; the source's own format
 */
public record HttpSourceConfig(String kind, Map<String, Object> settings, Map<String, String> headers,
        Map<String, String> queryParams, List<StoredTool> tools, Map<String, Map<String, Object>> operations)
        implements ServerConfig {

    public static final String OPENAPI = "openapi";
    public static final String GRAPHQL = "graphql";

    public HttpSourceConfig(@Nullable String kind, @Nullable Map<String, Object> settings,
            @Nullable Map<String, String> headers, @Nullable Map<String, String> queryParams,
            @Nullable List<StoredTool> tools, @Nullable Map<String, Map<String, Object>> operations) {
        Objects.requireNonNull(kind, "kind");
        if (!kind.equals(OPENAPI) && !kind.equals(GRAPHQL)) {
            throw new IllegalArgumentException("kind must be openapi or graphql, was " + kind);
        }
        settings = settings == null ? Map.of() : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(settings));
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        queryParams = queryParams == null ? Map.of() : Map.copyOf(queryParams);
        tools = tools == null ? List.of() : List.copyOf(tools);
        operations = operations == null ? Map.of() : Map.copyOf(operations);
        this.kind = kind;
        this.settings = settings;
        this.headers = headers;
        this.queryParams = queryParams;
        this.tools = tools;
        this.operations = operations;
    }

    /** The kind is the transport: nothing reaches these sources over MCP. */
    @Override
    public String transport() {
        return kind;
    }

    /** The authentication methods, as Executor stores them ({@code settings.authenticationTemplate}); none when unset. */
    @SuppressWarnings("unchecked")
    public List<Map<String, Object>> authenticationTemplate() {
        return settings.get("authenticationTemplate") instanceof List<?> list ? (List<Map<String, Object>>) list : List.of();
    }

    /** The same source with another authentication template. */
    public HttpSourceConfig withAuthenticationTemplate(List<Map<String, Object>> template) {
        Map<String, Object> next = new java.util.LinkedHashMap<>(settings);
        next.put("authenticationTemplate", template);
        return withSettings(next);
    }

    public HttpSourceConfig withSettings(Map<String, Object> newSettings) {
        return new HttpSourceConfig(kind, newSettings, headers, queryParams, tools, operations);
    }

    /** Names only for headers and query values, no tools: a config in a log line shows no secret and stays short. */
    @Override
    public String toString() {
        return "HttpSourceConfig[kind=" + kind + ", settings=" + settings.keySet() + ", headers=" + headers.keySet()
                + "=***, queryParams=" + queryParams.keySet() + "=***, tools=" + tools.size() + "]";
    }
}
