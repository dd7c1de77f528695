package dev.tether.http;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

import dev.tether.daemon.PropertyChecks;

/**
 * Outbound HTTP of OpenAPI and GraphQL sources: their tool calls and the documents they are made from.
 *
 * @param connectTimeout  how long a connection may take to open; default 10 s
 * @param responseTimeout how long to wait for the answer to begin, and between its reads; default 30 s
 * @param callTimeout     the most a whole request may take, answer read included; default 60 s
 * @param maxResponseSize the largest answer a tool call reads; a larger one fails the call; default 10 MB
 * @param maxDocumentSize the largest spec or introspection answer read or accepted; default 20 MB
 * @param maxRedirects    redirects followed per request; the answer after the last is the answer; default 5
 * @param maxConnections  connections open at once to all upstreams; default 64
 * @param maxIdleTime     how long an idle kept-alive connection stays open; default 20 s
 */
@ConfigurationProperties("tether.http")
public record HttpProperties(Duration connectTimeout, Duration responseTimeout, Duration callTimeout,
        DataSize maxResponseSize, DataSize maxDocumentSize, Integer maxRedirects, Integer maxConnections,
        Duration maxIdleTime) {

    public HttpProperties(@Nullable Duration connectTimeout, @Nullable Duration responseTimeout,
            @Nullable Duration callTimeout, @Nullable DataSize maxResponseSize, @Nullable DataSize maxDocumentSize,
            @Nullable Integer maxRedirects, @Nullable Integer maxConnections, @Nullable Duration maxIdleTime) {
        connectTimeout = PropertyChecks.positive("tether.http.connect-timeout", connectTimeout, Duration.ofSeconds(10));
        responseTimeout = PropertyChecks.positive("tether.http.response-timeout", responseTimeout, Duration.ofSeconds(30));
        callTimeout = PropertyChecks.positive("tether.http.call-timeout", callTimeout, Duration.ofSeconds(60));
        maxResponseSize = size("tether.http.max-response-size", maxResponseSize, DataSize.ofMegabytes(10));
        maxDocumentSize = size("tether.http.max-document-size", maxDocumentSize, DataSize.ofMegabytes(20));
        maxRedirects = maxRedirects == null ? 5 : maxRedirects;
        if (maxRedirects < 0) {
            throw new IllegalArgumentException("tether.http.max-redirects must not be negative, was " + maxRedirects);
        }
        maxConnections = PropertyChecks.atLeastOne("tether.http.max-connections", maxConnections, 64);
        maxIdleTime = PropertyChecks.positive("tether.http.max-idle-time", maxIdleTime, Duration.ofSeconds(20));
        this.connectTimeout = connectTimeout;
        this.responseTimeout = responseTimeout;
        this.callTimeout = callTimeout;
        this.maxResponseSize = maxResponseSize;
        this.maxDocumentSize = maxDocumentSize;
        this.maxRedirects = maxRedirects;
        this.maxConnections = maxConnections;
        this.maxIdleTime = maxIdleTime;
    }

    public static HttpProperties defaults() {
        return new HttpProperties(null, null, null, null, null, null, null, null);
    }

    private static DataSize size(String property, @Nullable DataSize value, DataSize fallback) {
        DataSize setting = value == null ? fallback : value;
        if (setting.toBytes() < 1 || setting.toBytes() > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(property + " must be between 1 byte and 2 GB, was " + setting);
        }
        return setting;
    }
}
