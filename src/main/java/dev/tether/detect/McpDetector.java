package dev.tether.detect;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

import io.netty.handler.codec.http.HttpHeaderNames;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufMono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientResponse;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.mcp.McpSessions;
import dev.tether.mcp.RemoteServer;

/**
 * Recognises an MCP server as Executor's MCP plugin does: a URL it can connect to and list tools from is one (high);
 * so is one that answers an unauthenticated JSON-RPC {@code initialize} the way only an MCP server does (an event
 * stream, a JSON-RPC envelope, or a 401 with a Bearer challenge and a JSON-RPC error; for a POST refused with
 * 404/405/406/415, a GET for an event stream); failing both, a URL whose host or path holds the word {@code mcp}
 * is a low-confidence guess.
 */
@Component
@Order(IntegrationDetector.MCP)
final class McpDetector implements IntegrationDetector {

    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
            + "\"" + RemoteServer.HANDSHAKE_VERSION + "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"executor-probe\",\"version\":\"0\"}}}";
    private static final Pattern MCP_TOKEN = Pattern.compile("(?:^|[^a-z0-9])mcp(?:$|[^a-z0-9])", Pattern.CASE_INSENSITIVE);
    private static final int BODY_LIMIT = 64 * 1024;

    private final McpSessions sessions;
    private final DetectProperties properties;
    private final JsonMapper json;
    private final HttpClient http;

    McpDetector(McpSessions sessions, DetectProperties properties, JsonMapper json) {
        this.sessions = sessions;
        this.properties = properties;
        this.json = json;
        this.http = HttpClient.create().responseTimeout(properties.timeout()).followRedirect(true);
    }

    @Override
    public Mono<Detection> detect(String url) {
        Optional<URI> parsed = parse(url);
        if (parsed.isEmpty()) {
            return Mono.empty();
        }
        URI uri = parsed.get();
        String host = uri.getHost() == null ? "" : uri.getHost();
        Detection high = new Detection("mcp", "high", url, host.isEmpty() ? "mcp" : host, slug(host));
        Detection low = new Detection("mcp", "low", url, high.name(), high.slug());
        boolean web = "http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme());
        Mono<Boolean> connects = web ? connects(uri) : Mono.just(false);
        Mono<Boolean> speaksMcp = web ? speaksMcp(url) : Mono.just(false);
        return connects
                .flatMap(connected -> connected ? Mono.just(true) : speaksMcp)
                .flatMap(mcp -> mcp ? Mono.just(high)
                        : MCP_TOKEN.matcher(host).find() || MCP_TOKEN.matcher(uri.getRawPath() == null ? "" : uri.getRawPath()).find()
                                ? Mono.just(low) : Mono.empty());
    }

    private Mono<Boolean> connects(URI uri) {
        RemoteServer server = new RemoteServer("detect", uri, RemoteServer.Transport.AUTO, Map.of(), Map.of());
        return sessions.withSession(server, session -> session.listTools().thenReturn(true))
                .timeout(properties.timeout())
                .onErrorReturn(false);
    }

    /** Executor's shape probe: one unauthenticated {@code initialize}, and a GET for the legacy SSE transport. */
    private Mono<Boolean> speaksMcp(String url) {
        Mono<Integer> post = http.headers(headers -> headers.set(HttpHeaderNames.CONTENT_TYPE, "application/json")
                        .set(HttpHeaderNames.ACCEPT, "application/json, text/event-stream"))
                .post().uri(url)
                .send(ByteBufMono.fromString(Mono.just(INITIALIZE)))
                .responseSingle((response, body) -> body.asString(StandardCharsets.UTF_8).defaultIfEmpty("")
                        .map(text -> classify(response, text, true)));
        Mono<Integer> get = http.headers(headers -> headers.set(HttpHeaderNames.ACCEPT, "text/event-stream"))
                .get().uri(url)
                // An SSE stream never ends: its headers decide, and the body is not read.
                .response((response, body) -> Mono.just(classify(response, "", false)))
                .next();
        return post.flatMap(verdict -> verdict == RETRY_WITH_GET ? get : Mono.just(verdict))
                .map(verdict -> verdict == MCP)
                .timeout(properties.timeout())
                .onErrorReturn(false);
    }

    private static final int NOT_MCP = 0;
    private static final int MCP = 1;
    private static final int RETRY_WITH_GET = 2;

    private int classify(HttpClientResponse response, String body, boolean post) {
        int status = response.status().code();
        String type = String.valueOf(response.responseHeaders().get(HttpHeaderNames.CONTENT_TYPE)).toLowerCase(Locale.ROOT);
        if (status >= 200 && status < 300) {
            if (type.startsWith("text/event-stream")) {
                return MCP;
            }
            return post && type.startsWith("application/json") && jsonRpc(body) ? MCP : NOT_MCP;
        }
        if (status == 401) {
            String challenge = String.valueOf(response.responseHeaders().get(HttpHeaderNames.WWW_AUTHENTICATE)).toLowerCase(Locale.ROOT);
            return challenge.startsWith("bearer") && jsonRpc(body) ? MCP : NOT_MCP;
        }
        return post && (status == 404 || status == 405 || status == 406 || status == 415) ? RETRY_WITH_GET : NOT_MCP;
    }

    private boolean jsonRpc(String body) {
        if (body.isEmpty() || body.length() > BODY_LIMIT) {
            return false;
        }
        try {
            JsonNode envelope = json.readTree(body);
            return envelope.isObject() && "2.0".equals(envelope.path("jsonrpc").asString(""))
                    && (envelope.has("result") || envelope.has("error") || envelope.has("method"));
        }
        catch (JacksonException ex) {
            return false;
        }
    }

    private static Optional<URI> parse(String url) {
        try {
            URI uri = new URI(url);
            return uri.isAbsolute() ? Optional.of(uri) : Optional.empty();
        }
        catch (URISyntaxException ex) {
            return Optional.empty();
        }
    }

    /** Executor's slug of a host: lower case, runs of other characters as {@code _}, none at the ends; {@code mcp} if empty. */
    static String slug(String host) {
        String slug = host.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_").replaceAll("^_+|_+$", "");
        return slug.isEmpty() ? "mcp" : slug;
    }
}
