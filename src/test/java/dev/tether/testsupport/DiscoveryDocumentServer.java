package dev.tether.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A real Google API Discovery document (Google's OAuth2 API v2, as googleapis/google-api-go-client carried it, in
 * {@code src/test/resources/discovery}) served over HTTP on a loopback port, as Google's Discovery service serves it.
 */
public final class DiscoveryDocumentServer implements AutoCloseable {

    private static final String PATH = "/discovery/v1/apis/oauth2/v2/rest";
    private final String text;
    private final DisposableServer server;

    public DiscoveryDocumentServer() {
        try (InputStream in = DiscoveryDocumentServer.class.getResourceAsStream("/discovery/oauth2-v2.json")) {
            this.text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (IOException unreadable) {
            throw new UncheckedIOException(unreadable);
        }
        this.server = HttpServer.create().host("127.0.0.1").port(0)
                .route(routes -> routes.get(PATH, (request, response) ->
                        response.header("content-type", "application/json; charset=UTF-8").sendString(Mono.just(text)).then()))
                .bindNow(Duration.ofSeconds(10));
    }

    /** Where the document is served. */
    public String url() {
        return "http://127.0.0.1:" + server.port() + PATH;
    }

    /** The document's text, to paste. */
    public String text() {
        return text;
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(10));
    }
}
