package dev.tether.mcp;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.client.McpAsyncClient;
import io.modelcontextprotocol.modern.client.McpClient;
import io.modelcontextprotocol.modern.client.transport.HttpClientMcpTransport;
import io.modelcontextprotocol.modern.client.transport.McpHttpRequestCustomizer;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.ElicitFormRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import io.modelcontextprotocol.spec.McpSchema.ElicitUrlRequest;
import io.modelcontextprotocol.spec.McpSchema.Implementation;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import dev.tether.daemon.Version;

/**
 * A remote server that speaks MCP 2026-07-28, through the MCP Java SDK's modern client: no handshake and no session,
 * every request self-describing. The SDK runs the multi round trips: a tool call answered {@code input_required} puts
 * each question to the call's {@link ElicitationHandler} (an execution pauses on it, and the user's answer in the web
 * UI or the CLI's resume goes back in the retry's {@code inputResponses}), and retries. Results are handed on in the
 * handshake era's types, which the rest of Tether speaks; the list's {@code ttlMs} goes with it
 * ({@link ToolCatalog#ttl()}).
 */
final class StatelessServerClient {

    /** The revision this client speaks; a server that does not list it in {@code server/discover} is of the handshake era. */
    static final String VERSION = RemoteServer.OPENING_VERSION;
    private static final TypeRef<List<Tool>> TOOLS = new TypeRef<>() {
    };

    private final McpAsyncClient client;
    private final McpJsonMapper json;
    private volatile McpSchema.@Nullable DiscoverResult discovered;

    StatelessServerClient(RemoteServer remote, SentBearer bearer, McpProperties properties, McpJsonMapper json) {
        this.json = json;
        Duration longest = List.of(properties.discoveryTimeout(), properties.pingTimeout(), properties.callTimeout())
                .stream().max(Duration::compareTo).orElseThrow();
        HttpClientMcpTransport transport = HttpClientMcpTransport.builder(RemoteTransports.withQuery(remote))
                .connectTimeout(properties.discoveryTimeout())
                .jsonMapper(json)
                .requestCustomizer(headers(remote, bearer))
                .build();
        // Our own bounds are per operation (and a call's stops while its questions wait); the SDK's never fire first.
        this.client = McpClient.async(transport)
                .clientInfo(McpSchema.Implementation.builder("tether", Version.TETHER).build())
                .jsonMapper(json)
                .roundTimeout(longest.plusSeconds(1))
                .callTimeout(Duration.ofDays(1))
                .maxListPages(properties.maxToolPages())
                .build();
    }

    /**
     * Whether the server speaks this revision: its {@code server/discover} lists it. Any failure (a 2025 server
     * refuses a request before {@code initialize}, an older one does not know the method) says it does not.
     */
    Mono<Boolean> speaks() {
        return client.discover()
                .doOnNext(result -> discovered = result)
                .map(result -> result.supportedVersions() != null && result.supportedVersions().contains(VERSION));
    }

    /** The server's {@code server/discover}, kept from the probe for as long as its {@code ttlMs} says. */
    Mono<Void> discover() {
        return client.discover().then();
    }

    /**
     * Liveness: the revision has no {@code ping}, and the SDK keeps {@code server/discover} for its {@code ttlMs}, so
     * the first page of tools is what reaches the server every time.
     */
    Mono<Void> ping() {
        return client.tools().list().then();
    }

    Optional<Implementation> serverInfo() {
        McpSchema.DiscoverResult result = discovered;
        Object info = result == null || result.meta() == null ? null : result.meta().get("io.modelcontextprotocol/serverInfo");
        return info == null ? Optional.empty() : Optional.ofNullable(json.convertValue(info, Implementation.class));
    }

    Optional<String> instructions() {
        McpSchema.DiscoverResult result = discovered;
        return result == null ? Optional.empty() : Optional.ofNullable(result.instructions());
    }

    /** Every page of the server's tools (the SDK follows the cursors, at most {@code max-tool-pages}), with its TTL. */
    Mono<ToolCatalog> listTools() {
        return client.listTools().skipCache().list().map(result -> new ToolCatalog(json.convertValue(result.tools(), TOOLS),
                Optional.empty(), Optional.ofNullable(result.ttlMs()).map(Duration::ofMillis)));
    }

    /**
     * Calls a tool; each round of {@code input_required} puts its questions to {@code questions} and retries with the
     * answers. Cancelling the Mono ends the call's request (the revision cancels by closing it).
     */
    Mono<CallToolResult> callTool(String tool, Map<String, Object> arguments, ElicitationHandler questions,
            @Nullable ProgressListener progress) {
        McpAsyncClient.ToolSpec call = client.tool(tool).arguments(arguments)
                .formElicitation(form -> questions.elicit(json.convertValue(form, ElicitFormRequest.class)).map(this::answer))
                // only a web page goes to a user, as in the handshake era (CallQuestions)
                .urlElicitation(url -> CallQuestions.webUrl(url.url())
                        ? questions.elicit(json.convertValue(url, ElicitUrlRequest.class)).map(this::answer)
                        : Mono.just(McpSchema.ElicitResult.decline()));
        if (progress != null) {
            call = call.progress(params -> Mono.fromRunnable(() -> progress.onProgress(new ProgressNotification(
                    String.valueOf(params.progressToken()), params.progress() == null ? 0 : params.progress(), params.total(),
                    params.message()))));
        }
        return call.call().map(result -> json.convertValue(result, CallToolResult.class));
    }

    private McpSchema.ElicitResult answer(ElicitResult answer) {
        return json.convertValue(answer, McpSchema.ElicitResult.class);
    }

    /** The remote's headers and query values, and its bearer token asked for on every request (a refreshed one is sent). */
    private static McpHttpRequestCustomizer headers(RemoteServer remote, SentBearer bearer) {
        return (request, headers, context) -> {
            remote.headers().forEach(headers::set);
            return bearer.present() ? bearer.token().doOnNext(token -> headers.set("Authorization", "Bearer " + token)).then()
                    : Mono.empty();
        };
    }
}
