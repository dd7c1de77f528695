package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The browser's part of an OAuth flow, as a browser does it: plain GETs without Tether's token, redirects not
 * followed, so the test sees where each one points.
 */
final class Browser {

    private static final Duration BOUND = Duration.ofSeconds(60);

    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /** Where the page at {@code uri} redirects to; it must redirect. */
    String location(URI uri) {
        HttpResponse<String> answer = get(uri);
        assertThat(answer.statusCode()).as(answer.body()).isBetween(300, 399);
        return answer.headers().firstValue("location").orElseThrow();
    }

    HttpResponse<String> get(URI uri) {
        try {
            return http.send(HttpRequest.newBuilder(uri).timeout(BOUND).GET().build(), HttpResponse.BodyHandlers.ofString());
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
