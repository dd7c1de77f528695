package dev.tether.http;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import io.netty.channel.ChannelOption;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * The outbound HTTP client of OpenAPI and GraphQL sources, on Reactor Netty. Every request is bounded: a connect
 * timeout, a response timeout between reads, a deadline for the whole exchange, a most-bytes bound on the answer
 * and a most-redirects bound (Reactor Netty drops credentials when a redirect leaves the host). Cancelling the
 * returned {@code Mono} while the answer is in flight closes its connection: an upstream never keeps a request
 * that nobody waits for. Idle kept-alive connections close after {@code max-idle-time}.
 */
@Component
public final class HttpSourceClient implements DisposableBean {

    private final HttpProperties properties;
    private final ConnectionProvider connections;
    private final WebClient web;

    public HttpSourceClient(HttpProperties properties) {
        this.properties = properties;
        this.connections = ConnectionProvider.builder("tether-http-sources")
                .maxConnections(properties.maxConnections())
                .maxIdleTime(properties.maxIdleTime())
                .pendingAcquireTimeout(properties.callTimeout())
                .build();
        int redirects = properties.maxRedirects();
        HttpClient http = HttpClient.create(connections)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, properties.connectTimeout().toMillis()))
                .responseTimeout(properties.responseTimeout())
                .followRedirect((request, response) -> redirects > 0 && isRedirect(response.status().code())
                        && request.redirectedFrom().length < redirects);
        this.web = WebClient.builder().clientConnector(new ReactorClientHttpConnector(http)).build();
    }

    /**
     * Sends a request and reads its answer whole, at most {@code max-response-size} bytes. Fails with
     * {@link UpstreamException} when there is no answer in time, no connection, or too large an answer.
     */
    public Mono<HttpAnswer> exchange(HttpMethod method, URI uri, Map<String, String> headers, byte @Nullable [] body) {
        return exchange(method, uri, headers, body, (int) properties.maxResponseSize().toBytes());
    }

    /**
     * Fetches a document a user gave the address of (a spec, an introspection answer): a {@code GET}, at most
     * {@code max-document-size} bytes. Only {@code http} and {@code https} addresses are fetched.
     */
    public Mono<HttpAnswer> fetchDocument(URI uri, Map<String, String> headers) {
        return Mono.defer(() -> {
            checkScheme(uri);
            return exchange(HttpMethod.GET, uri, headers, null, maxDocumentBytes());
        });
    }

    /** Sends a request whose answer is a document (introspection): bounded by {@code max-document-size}. */
    public Mono<HttpAnswer> exchangeDocument(HttpMethod method, URI uri, Map<String, String> headers, byte[] body) {
        return Mono.defer(() -> {
            checkScheme(uri);
            return exchange(method, uri, headers, body, maxDocumentBytes());
        });
    }

    public int maxDocumentBytes() {
        return (int) properties.maxDocumentSize().toBytes();
    }

    private Mono<HttpAnswer> exchange(HttpMethod method, URI uri, Map<String, String> headers, byte @Nullable [] body, int maxBytes) {
        WebClient.RequestBodySpec request = web.method(method).uri(uri).headers(h -> headers.forEach(h::set));
        WebClient.RequestHeadersSpec<?> sent = body == null ? request : request.bodyValue(body);
        return sent.exchangeToMono(response -> read(response, maxBytes))
                .timeout(properties.callTimeout())
                .onErrorMap(TimeoutException.class, timeout -> new UpstreamException(method + " " + redacted(uri)
                        + " got no whole answer within " + properties.callTimeout().toMillis() + "ms", timeout))
                .onErrorMap(WebClientRequestException.class, failed -> new UpstreamException(method + " " + redacted(uri)
                        + " failed: " + describe(failed), failed))
                .onErrorMap(DataBufferLimitException.class, tooLarge -> new UpstreamException(method + " " + redacted(uri)
                        + " answered more than " + maxBytes + " bytes", tooLarge));
    }

    private static Mono<HttpAnswer> read(ClientResponse response, int maxBytes) {
        Map<String, String> headers = new LinkedHashMap<>();
        response.headers().asHttpHeaders().forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), String.join(", ", values)));
        return BodyBytes.read(response.body(BodyExtractors.toDataBuffers()), maxBytes)
                .defaultIfEmpty(new byte[0])
                .map(bytes -> new HttpAnswer(response.statusCode().value(), headers, bytes));
    }

    private static void checkScheme(URI uri) {
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!List.of("http", "https").contains(scheme) || uri.getHost() == null) {
            throw new UpstreamException("only http and https addresses are fetched, was " + redacted(uri));
        }
    }

    private static boolean isRedirect(int status) {
        return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
    }

    /** The address without its query: query values may be credentials. */
    public static String redacted(URI uri) {
        String text = uri.toString();
        int query = text.indexOf('?');
        return query < 0 ? text : text.substring(0, query) + "?…";
    }

    private static String describe(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
    }

    /** Closes the connections the client keeps; a request still running fails. */
    @Override
    public void destroy() {
        connections.dispose();
    }
}
