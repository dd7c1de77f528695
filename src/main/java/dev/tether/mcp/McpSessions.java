package dev.tether.mcp;

import java.net.ConnectException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema.ClientCapabilities;
import io.modelcontextprotocol.spec.McpSchema.Implementation;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.tether.daemon.Version;
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
    private final RemoteTransports transports;
    private final ObservationRegistry observations;
    /**
     * Found once here, on the thread that makes this bean: the SDK finds it with a {@link java.util.ServiceLoader} on
     * each client it builds, reading jars, which would otherwise happen on an event loop for the first session.
     */
    private final JsonSchemaValidator validator = McpJsonDefaults.getSchemaValidator();

    public McpSessions(ChildProcesses children, DockerRunRewriter docker, McpProperties properties) {
        this(children, docker, properties, ObservationRegistry.NOOP);
    }

    /** {@code observations} gets a span for each session's start and each tool call ({@link dev.tether.tracing.Spans}). */
    @Autowired
    public McpSessions(ChildProcesses children, DockerRunRewriter docker, McpProperties properties, ObservationRegistry observations) {
        this.observations = observations;
        this.children = children;
        this.docker = docker;
        this.properties = properties;
        this.transports = new RemoteTransports(properties, json);
    }

    /**
     * A session that lives as long as the subscription: it emits once the handshake is done, then stays open
     * until the subscriber cancels or the server dies (the Flux errors). For a stdio server, the child is
     * torn down at whichever end comes first, including a cancel before the session arrived.
     */
    public Flux<McpSession> open(McpServer server) {
        return open(server, teardown -> { });
    }

    /**
     * As {@link #open(McpServer)}; {@code childTeardowns} is told, as soon as a stdio server's child is spawned, of
     * the Mono that completes once that child's teardown ended (container removed included): the session pool counts
     * a child until then, not only until its session ended.
     */
    public Flux<McpSession> open(McpServer server, Consumer<Mono<Void>> childTeardowns) {
        return open(server, Optional.empty(), childTeardowns);
    }

    /**
     * As {@link #open(McpServer, Consumer)}, a stdio server's child under {@code fence} ({@code ChildSpec.fence}: a
     * connection's key where replicas share a store, which names its container so that one engine runs one).
     */
    public Flux<McpSession> open(McpServer server, Optional<String> fence, Consumer<Mono<Void>> childTeardowns) {
        Redaction redaction = Redaction.of(server);
        return opened(server, fence, childTeardowns).onErrorMap(error -> redaction.apply(server.name(), error));
    }

    /** Whether {@code server}'s child is a {@code docker run} client, whose container lives on a Docker engine. */
    public boolean runsContainer(McpServer server) {
        return server instanceof StdioServer stdio && childSpec(stdio, Optional.empty()).containerName().isPresent();
    }

    private Flux<McpSession> opened(McpServer server, Optional<String> fence, Consumer<Mono<Void>> childTeardowns) {
        if (server instanceof StdioServer stdio) {
            return Flux.defer(() -> children.using(childSpec(stdio, fence), child -> {
                childTeardowns.accept(child.onDispose().then());
                ChildProcessTransport transport = new ChildProcessTransport(stdio.name(), child, json);
                return live(session(stdio, transport, transport.failure(), SentBearer.none()));
            }));
        }
        RemoteServer remote = (RemoteServer) server;
        return Flux.defer(() -> {
            SentBearer bearer = new SentBearer(remote.bearer());
            long handshakeUnder = bearer.generation();
            // A handshake refused for credentials (a token revoked before its recorded expiry) goes once more with a
            // renewed token. Only the handshake can fail here: an open remote session's Flux never errors (live).
            return remote(remote, bearer)
                    .onErrorResume(RemoteServer::wantsCredentials, refused -> bearer.renew(handshakeUnder)
                            .flatMapMany(renewed -> renewed ? remote(remote, bearer) : Flux.error(refused)));
        });
    }

    private Flux<McpSession> remote(RemoteServer remote, SentBearer bearer) {
        return switch (remote.transport()) {
            case STREAMABLE_HTTP -> statelessOr(remote, bearer, live(remote, "streamable HTTP",
                    () -> session(remote, transports.streamableHttp(remote, bearer), Mono.never(), bearer)));
            case SSE -> live(remote, "SSE", () -> sseSession(remote, "SSE", bearer));
            case AUTO -> statelessOr(remote, bearer, streamableHttpThenSse(remote, bearer));
        };
    }

    /**
     * MCP 2026-07-28 where the server speaks it: a {@code server/discover} first (one request, bounded by the
     * discovery timeout), and a server that lists the revision gets a session of it; anything else (a 2025 server
     * refuses a request before its handshake; an old one does not know the method; one that wants credentials) gets
     * {@code handshake}, as before, which also reports what went wrong. The SSE transport is of the handshake era only.
     */
    private Flux<McpSession> statelessOr(RemoteServer remote, SentBearer bearer, Flux<McpSession> handshake) {
        return Flux.defer(() -> {
            StatelessServerClient modern = new StatelessServerClient(remote, bearer, properties, json);
            return modern.speaks()
                    .timeout(properties.discoveryTimeout())
                    .onErrorReturn(false)
                    .flatMapMany(speaks -> speaks ? live(remote, "MCP 2026-07-28",
                            () -> new McpSession(remote.name(), modern, properties, Redaction.of(remote), bearer, observations)) : handshake);
        });
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
    private Flux<McpSession> streamableHttpThenSse(RemoteServer remote, SentBearer bearer) {
        return live(remote, "streamable HTTP", () -> session(remote, transports.streamableHttp(remote, bearer), Mono.never(), bearer))
                .onErrorResume(error -> !RemoteServer.wantsCredentials(error), error -> {
                    String sse = "SSE (streamable HTTP failed: " + describe(error) + ")";
                    return live(remote, sse, () -> sseSession(remote, sse, bearer));
                });
    }

    /**
     * The SDK's SSE transport only logs a failed connect (a refused connection, a 404 on the stream) and leaves
     * the handshake waiting for its timeout; watching the connect reports that failure to the session at once.
     */
    private McpSession sseSession(RemoteServer remote, String transportName, SentBearer bearer) {
        ConnectWatch transport = new ConnectWatch(remote, transportName, transports.sse(remote, bearer));
        return session(remote, transport, transport.failure(), bearer);
    }

    private McpSession session(McpServer server, McpClientTransport transport, Mono<Void> serverFailure, SentBearer bearer) {
        String name = server.name();
        Sinks.Many<List<Tool>> toolsChanged = Sinks.many().multicast().directBestEffort();
        Sinks.Many<ProgressNotification> progress = Sinks.many().multicast().directBestEffort();
        CallQuestions questions = new CallQuestions();
        Duration longest = List.of(properties.discoveryTimeout(), properties.pingTimeout(), properties.callTimeout())
                .stream().max(Duration::compareTo).orElseThrow();
        // Our own bounds are per operation; the SDK's must never fire before them.
        McpAsyncClient client = McpClient.async(transport)
                .clientInfo(new Implementation("tether", Version.TETHER))
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
        return new McpSession(name, client, transport, serverFailure, properties, toolsChanged, progress, questions,
                Redaction.of(server), bearer, observations);
    }

    static McpServerException unreachable(RemoteServer remote, String transport, Throwable error) {
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

    private ChildSpec childSpec(StdioServer server, Optional<String> fence) {
        List<String> argv = new ArrayList<>();
        argv.add(server.command());
        argv.addAll(server.args());
        ChildSpec spec = ChildSpec.of(newChildId(), argv).withEnv(server.env()).withFence(fence);
        return docker.rewrite(server.cwd().map(spec::withCwd).orElse(spec));
    }

    private static String newChildId() {
        byte[] bytes = new byte[6];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
