package dev.tether.mcp;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.stream.Collectors;

import io.modelcontextprotocol.client.transport.HttpClientSseClientTransport;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.customizer.McpAsyncHttpClientRequestCustomizer;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpClientTransport;

/** The SDK's HTTP transports to a remote server, with its headers, query values and bearer token on every request. */
final class RemoteTransports {

    private final McpProperties properties;
    private final McpJsonMapper json;

    RemoteTransports(McpProperties properties, McpJsonMapper json) {
        this.properties = properties;
        this.json = json;
    }

    McpClientTransport streamableHttp(RemoteServer remote, SentBearer bearer) {
        URI endpoint = withQuery(remote);
        return HttpClientStreamableHttpTransport.builder(origin(endpoint))
                .endpoint(pathAndQuery(endpoint))
                .requestBuilder(headers(remote))
                .asyncHttpRequestCustomizer(bearer(bearer))
                .connectTimeout(properties.discoveryTimeout())
                .jsonMapper(json)
                .build();
    }

    McpClientTransport sse(RemoteServer remote, SentBearer bearer) {
        URI endpoint = withQuery(remote);
        return HttpClientSseClientTransport.builder(origin(endpoint))
                .sseEndpoint(pathAndQuery(endpoint))
                .requestBuilder(headers(remote))
                .asyncHttpRequestCustomizer(bearer(bearer))
                .connectTimeout(properties.discoveryTimeout())
                .jsonMapper(json)
                .build();
    }

    /** The token is asked for on every request, so that one refreshed meanwhile is the one sent. */
    private static McpAsyncHttpClientRequestCustomizer bearer(SentBearer bearer) {
        return !bearer.present() ? McpAsyncHttpClientRequestCustomizer.NOOP : (builder, method, uri, body, context) ->
                bearer.token().map(token -> builder.setHeader("Authorization", "Bearer " + token));
    }

    private static HttpRequest.Builder headers(RemoteServer remote) {
        HttpRequest.Builder builder = HttpRequest.newBuilder();
        remote.headers().forEach(builder::header);
        return builder;
    }

    static URI withQuery(RemoteServer remote) {
        if (remote.queryParams().isEmpty()) {
            return remote.endpoint();
        }
        String added = remote.queryParams().entrySet().stream()
                .map(e -> encode(e.getKey()) + "=" + encode(e.getValue()))
                .collect(Collectors.joining("&"));
        String query = remote.endpoint().getRawQuery();
        String base = remote.endpoint().toString().replaceFirst("\\?.*$", "");
        return URI.create(base + "?" + (query == null || query.isEmpty() ? added : query + "&" + added));
    }

    private static String origin(URI endpoint) {
        return endpoint.getScheme() + "://" + endpoint.getRawAuthority();
    }

    private static String pathAndQuery(URI endpoint) {
        String path = endpoint.getRawPath() == null || endpoint.getRawPath().isEmpty() ? "/" : endpoint.getRawPath();
        return endpoint.getRawQuery() == null ? path : path + "?" + endpoint.getRawQuery();
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }
}
