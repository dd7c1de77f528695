package dev.tether.mcp;

import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientSseClientTransport;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.customizer.McpAsyncHttpClientRequestCustomizer;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema.ClientCapabilities;
import io.modelcontextprotocol.spec.McpSchema.Implementation;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.tether.TetherApplication;
import dev.tether.docker.DockerRunRewriter;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ChildSpec;

/**
 * Opens MCP sessions: over a stdio child, or over HTTP to a remote server. A session is a Flux that emits
 * once the handshake is done and lives as long as its subscription; for a stdio server that is how long
 * the child lives.
 */
@Component
public final class McpSessions {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final ChildProcesses children;
    private final DockerRunRewriter docker;
    private final McpProperties properties;
    private final McpJsonMapper json = McpJsonDefaults.getMapper();
    /**
     * Found once here, on the thread that makes this bean: the SDK finds it with a {@link java.util.ServiceLoader} on
     * each client it builds, reading jars, which would otherwise happen on an event loop for the first session.
     */
    private final JsonSchemaValidator validator = McpJsonDefaults.getSchemaValidator();

    public McpSessions(ChildProcesses children, DockerRunRewriter docker, McpProperties properties) {
        this.children = children;
        this.docker = docker;
        this.properties = properties;
    }

    /**
     * A session that lives as long as the subscription: it emits once the handshake is done, then stays open
     * until the subscriber cancels or the server dies (the Flux errors). For a stdio server, the child is
     * torn down at whichever end comes first, including a cancel before the session arrived.
     */
    public Flux<McpSession> open(McpServer server) {
        if (server instanceof StdioServer stdio) {
            return Flux.defer(() -> children.using(childSpec(stdio), child -> {
                ChildProcessTransport transport = new ChildProcessTransport(stdio.name(), child, json);
                return live(session(stdio.name(), transport, transport.failure()));
            }));
        }
        RemoteServer remote = (RemoteServer) server;
        return switch (remote.transport()) {
            case STREAMABLE_HTTP -> live(remote, "streamable HTTP", () -> session(remote.name(), streamableHttp(remote), Mono.never()));
            case SSE -> live(remote, "SSE", () -> sseSession(remote, "SSE"));
            case AUTO -> streamableHttpThenSse(remote);
        };
    }

    /** Runs {@code body} on a session of its own, started for it and ended after it: the original's way, for one-off uses. */
    public <T> Mono<T> withSession(McpServer server, Function<McpSession, Mono<T>> body) {
        return open(server)
                .concatMap(session -> body.apply(session).map(Optional::of).defaultIfEmpty(Optional.empty()))
                .next()
                .flatMap(Mono::justOrEmpty);
    }

    private Flux<McpSession> live(McpSession session) {
        return Flux.using(() -> session,
                s -> s.initialize().thenMany(Flux.just(s).concatWith(s.<McpSession>failure())),
                McpSession::close);
    }

    /** A remote session; a handshake that fails says which endpoint could not be reached, and why. */
    private Flux<McpSession> live(RemoteServer remote, String transport, Supplier<McpSession> session) {
        return Flux.usingWhen(Mono.fromSupplier(session),
                s -> s.initialize()
                        .onErrorMap(error -> !(error instanceof McpServerException), error -> unreachable(remote, transport, error))
                        .thenMany(Flux.just(s).concatWith(Flux.never())),
                McpSession::closeGracefully);
    }

    /**
     * Streamable HTTP first; a server that does not speak it (the handshake fails) gets SSE. One that refused us
     * for credentials does speak it: asking again over SSE would only hide why it refused.
     */
    private Flux<McpSession> streamableHttpThenSse(RemoteServer remote) {
        return Flux.defer(() -> {
            AtomicBoolean opened = new AtomicBoolean();
            return live(remote, "streamable HTTP", () -> session(remote.name(), streamableHttp(remote), Mono.never()))
                    .doOnNext(session -> opened.set(true))
                    .onErrorResume(error -> !opened.get() && !RemoteServer.wantsCredentials(error), error -> {
                        String sse = "SSE (streamable HTTP failed: " + describe(error) + ")";
                        return live(remote, sse, () -> sseSession(remote, sse));
                    });
        });
    }

    /**
     * The SDK's SSE transport only logs a failed connect (a refused connection, a 404 on the stream) and leaves
     * the handshake waiting for its timeout; watching the connect reports that failure to the session at once.
     */
    private McpSession sseSession(RemoteServer remote, String transportName) {
        ConnectWatch transport = new ConnectWatch(remote, transportName, sse(remote));
        return session(remote.name(), transport, transport.failure());
    }

    private McpSession session(String name, McpClientTransport transport, Mono<Void> serverFailure) {
        Sinks.Many<List<Tool>> toolsChanged = Sinks.many().multicast().directBestEffort();
        Sinks.Many<ProgressNotification> progress = Sinks.many().multicast().directBestEffort();
        CallQuestions questions = new CallQuestions();
        Duration longest = List.of(properties.discoveryTimeout(), properties.pingTimeout(), properties.callTimeout())
                .stream().max(Duration::compareTo).orElseThrow();
        // Our own bounds are per operation; the SDK's must never fire before them.
        McpAsyncClient client = McpClient.async(transport)
                .clientInfo(new Implementation("tether", TetherApplication.VERSION))
                // Both modes, to every server: some list their asking tools only to a client that can ask (server-everything).
                .capabilities(ClientCapabilities.builder().elicitation(true, true).build())
                .elicitation(questions::ask)
                .urlElicitation(questions::ask)
                .jsonSchemaValidator(validator)
                .requestTimeout(longest.plusSeconds(1))
                .initializationTimeout(longest.plusSeconds(1))
                .toolsChangeConsumer(tools -> Mono.fromRunnable(() -> toolsChanged.tryEmitNext(tools)))
                // Over HTTP, progress of two calls can arrive on two streams at once: wait out the other emission.
                .progressConsumer(notification -> Mono.fromRunnable(() -> progress.emitNext(notification,
                        Sinks.EmitFailureHandler.busyLooping(Duration.ofMillis(100)))))
                .build();
        return new McpSession(name, client, transport, serverFailure, properties, toolsChanged, progress, questions);
    }

    private McpClientTransport streamableHttp(RemoteServer remote) {
        URI endpoint = withQuery(remote);
        return HttpClientStreamableHttpTransport.builder(origin(endpoint))
                .endpoint(pathAndQuery(endpoint))
                .requestBuilder(headers(remote))
                .asyncHttpRequestCustomizer(bearer(remote))
                .connectTimeout(properties.discoveryTimeout())
                .jsonMapper(json)
                .build();
    }

    private McpClientTransport sse(RemoteServer remote) {
        URI endpoint = withQuery(remote);
        return HttpClientSseClientTransport.builder(origin(endpoint))
                .sseEndpoint(pathAndQuery(endpoint))
                .requestBuilder(headers(remote))
                .asyncHttpRequestCustomizer(bearer(remote))
                .connectTimeout(properties.discoveryTimeout())
                .jsonMapper(json)
                .build();
    }

    /** The token is asked for on every request, so that one refreshed meanwhile is the one sent. */
    private static McpAsyncHttpClientRequestCustomizer bearer(RemoteServer remote) {
        return remote.bearer().<McpAsyncHttpClientRequestCustomizer>map(source -> (builder, method, uri, body, context) ->
                source.token().map(token -> builder.setHeader("Authorization", "Bearer " + token)))
                .orElse(McpAsyncHttpClientRequestCustomizer.NOOP);
    }

    private static HttpRequest.Builder headers(RemoteServer remote) {
        HttpRequest.Builder builder = HttpRequest.newBuilder();
        remote.headers().forEach(builder::header);
        return builder;
    }

    private static URI withQuery(RemoteServer remote) {
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

    /** A transport whose failed {@code connect} becomes a {@link McpServerException} on {@link #failure()}. */
    private static final class ConnectWatch implements McpClientTransport {

        private final RemoteServer remote;
        private final String transportName;
        private final McpClientTransport transport;
        private final Sinks.One<McpServerException> failure = Sinks.one();

        ConnectWatch(RemoteServer remote, String transportName, McpClientTransport transport) {
            this.remote = remote;
            this.transportName = transportName;
            this.transport = transport;
        }

        /** Never emits; errors when the connect failed. */
        Mono<Void> failure() {
            return failure.asMono().flatMap(Mono::error);
        }

        @Override
        public Mono<Void> connect(Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler) {
            return transport.connect(handler).doOnError(error -> failure.tryEmitValue(unreachable(remote, transportName, error)));
        }

        @Override
        public Mono<Void> sendMessage(JSONRPCMessage message) {
            return transport.sendMessage(message);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return transport.closeGracefully();
        }

        @Override
        public void close() {
            transport.close();
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
            return transport.unmarshalFrom(data, typeRef);
        }

        @Override
        public List<String> protocolVersions() {
            return transport.protocolVersions();
        }

        @Override
        public void setExceptionHandler(Consumer<Throwable> handler) {
            transport.setExceptionHandler(handler);
        }
    }

    private static McpServerException unreachable(RemoteServer remote, String transport, Throwable error) {
        return McpServerException.redacted(remote.name(), "cannot connect to MCP server '" + remote.name() + "' at "
                + remote.endpoint() + " over " + transport + ": " + describe(error), error, Redaction.of(remote));
    }

    /**
     * The innermost telling part of a failure: the SDK wraps everything in "Client failed to initialize ...", and
     * a refused connection is a {@link ConnectException} without a message.
     */
    private static String describe(Throwable error) {
        String described = error.getClass().getName();
        for (Throwable e = error; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (e instanceof ConnectException && (e.getMessage() == null || e.getMessage().isBlank())) {
                return "connection failed (" + e.getClass().getName() + ")";
            }
            if (e.getMessage() != null && !e.getMessage().isBlank()) {
                described = e.getMessage();
            }
        }
        return described;
    }

    private ChildSpec childSpec(StdioServer server) {
        List<String> argv = new ArrayList<>();
        argv.add(server.command());
        argv.addAll(server.args());
        ChildSpec spec = ChildSpec.of(newChildId(), argv).withEnv(server.env());
        return docker.rewrite(server.cwd().map(spec::withCwd).orElse(spec));
    }

    private static String newChildId() {
        byte[] bytes = new byte[6];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
