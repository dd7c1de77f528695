package dev.tether.oauth;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeoutException;

import io.netty.channel.ChannelOption;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.stereotype.Component;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.mcp.RemoteServer;

/**
 * Tether's HTTP client for authorization servers and metadata endpoints: every request bounded in time, every
 * answer bounded in size, redirects not followed (a token endpoint that redirects is misconfigured, and following
 * would resend the form elsewhere). Failures are {@link OAuthHttpException}s that say which URL and why, never
 * with a body that could hold a secret.
 */
@Component
final class OAuthHttp {

    /** An answer: its status, the headers that matter here, and its body as text. */
    record Reply(int status, HttpHeaders headers, String body) {

        boolean ok() {
            return status >= 200 && status < 300;
        }
    }

    private final WebClient web;
    private final JsonMapper json;
    private final Duration timeout;

    OAuthHttp(OAuthProperties properties, JsonMapper json) {
        this.json = json;
        this.timeout = properties.timeout();
        HttpClient client = HttpClient.create()
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, properties.timeout().toMillis()))
                .responseTimeout(properties.timeout())
                .followRedirect(false);
        this.web = WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(client))
                .codecs(codecs -> codecs.defaultCodecs().maxInMemorySize((int) properties.maxResponseSize().toBytes()))
                .build();
    }

    Mono<Reply> get(URI uri, Map<String, String> headers) {
        return exchange(uri, web.get().uri(uri).headers(h -> headers.forEach(h::set)).accept(MediaType.APPLICATION_JSON));
    }

    /** A form POST (token endpoints), with HTTP Basic client authentication when given. */
    Mono<Reply> postForm(URI uri, Map<String, String> form, Optional<String> basicAuthorization) {
        MultiValueMap<String, String> fields = new LinkedMultiValueMap<>();
        form.forEach(fields::add);
        return exchange(uri, web.post().uri(uri)
                .headers(h -> basicAuthorization.ifPresent(value -> h.set(HttpHeaders.AUTHORIZATION, value)))
                .contentType(MediaType.APPLICATION_FORM_URLENCODED)
                .accept(MediaType.APPLICATION_JSON)
                .body(BodyInserters.fromFormData(fields)));
    }

    Mono<Reply> postJson(URI uri, Object body) {
        return exchange(uri, web.post().uri(uri).contentType(MediaType.APPLICATION_JSON).accept(MediaType.APPLICATION_JSON)
                .bodyValue(json.writeValueAsString(body)));
    }

    /**
     * A POST without credentials, to see the challenge a protected resource answers with: the request a connection
     * opens with ({@code server/discover} of {@link RemoteServer#OPENING_VERSION}), so the answer is the one the
     * connection would get.
     */
    Mono<Reply> challenge(URI uri) {
        return exchange(uri, web.post().uri(uri).contentType(MediaType.APPLICATION_JSON)
                .accept(MediaType.APPLICATION_JSON, MediaType.TEXT_EVENT_STREAM)
                .header("MCP-Protocol-Version", RemoteServer.OPENING_VERSION)
                .header("Mcp-Method", "server/discover")
                .bodyValue("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"server/discover\",\"params\":{\"_meta\":"
                        + "{\"io.modelcontextprotocol/protocolVersion\":\"" + RemoteServer.OPENING_VERSION + "\"}}}"));
    }

    /** The body as JSON, or an error that names the URL when it is none. */
    JsonNode json(URI uri, Reply reply) {
        try {
            JsonNode node = json.readTree(reply.body());
            if (node == null || !node.isObject()) {
                throw new OAuthHttpException(uri, "answered with JSON that is not an object");
            }
            return node;
        }
        catch (tools.jackson.core.JacksonException ex) {
            throw new OAuthHttpException(uri, "answered HTTP " + reply.status() + " with a body that is not JSON");
        }
    }

    private Mono<Reply> exchange(URI uri, WebClient.RequestHeadersSpec<?> request) {
        return request.exchangeToMono(response -> response.bodyToMono(String.class).defaultIfEmpty("")
                        .map(body -> new Reply(response.statusCode().value(), response.headers().asHttpHeaders(), body)))
                .timeout(timeout, Mono.error(() -> new OAuthHttpException(uri, "did not answer within " + timeout.toMillis() + "ms")))
                .onErrorMap(error -> !(error instanceof OAuthHttpException), error -> new OAuthHttpException(uri, reason(error)));
    }

    private static String reason(Throwable error) {
        if (error instanceof DataBufferLimitException) {
            return "answered with more than the bounded size (tether.oauth.max-response-size)";
        }
        if (error instanceof TimeoutException) {
            return "did not answer in time";
        }
        if (error instanceof WebClientRequestException request) {
            Throwable cause = request.getMostSpecificCause();
            return "could not be reached (" + cause.getClass().getSimpleName()
                    + (cause.getMessage() == null ? "" : ": " + cause.getMessage()) + ")";
        }
        return "failed: " + error.getClass().getSimpleName() + (error.getMessage() == null ? "" : ": " + error.getMessage());
    }
}
