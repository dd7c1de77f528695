package dev.tether.mcp;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Function;

import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema.Implementation;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.tether.docker.DockerRunRewriter;
import dev.tether.process.ChildProcess;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ChildSpec;

/**
 * Opens MCP sessions over stdio children. A session exists for the duration of one pipeline: the child is
 * started when {@link #withSession} is subscribed and torn down when it terminates or is cancelled.
 */
@Component
public final class McpSessions {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final ChildProcesses children;
    private final DockerRunRewriter docker;
    private final McpProperties properties;
    private final McpJsonMapper json = McpJsonDefaults.getMapper();

    public McpSessions(ChildProcesses children, DockerRunRewriter docker, McpProperties properties) {
        this.children = children;
        this.docker = docker;
        this.properties = properties;
    }

    /**
     * Starts the server, completes the MCP handshake and runs {@code body} on the session. Cancelling the
     * returned Mono at any point (while starting, mid-handshake, mid-request) tears the child down.
     */
    public <T> Mono<T> withSession(StdioServer server, Function<McpSession, Mono<T>> body) {
        return Mono.defer(() -> children.using(childSpec(server), child -> Mono.using(
                        () -> open(server, child),
                        session -> session.initialize().then(Mono.defer(() -> body.apply(session))),
                        McpSession::close))
                .singleOrEmpty());
    }

    /**
     * A session that lives as long as the subscription: it emits once the handshake is done, then stays open
     * until cancelled or completed by the subscriber (the child is torn down) or until the server exits or
     * breaks the protocol (the Flux errors and the child is torn down). Meant for owners that keep a
     * session warm, such as a pool; cancelling before the session arrives tears the half-made child down.
     */
    public Flux<McpSession> open(StdioServer server) {
        return Flux.defer(() -> children.using(childSpec(server), child -> Flux.using(
                () -> open(server, child),
                session -> session.initialize().thenMany(Flux.just(session).concatWith(session.<McpSession>failure())),
                McpSession::close)));
    }

    private McpSession open(StdioServer server, ChildProcess child) {
        ChildProcessTransport transport = new ChildProcessTransport(server.name(), child, json);
        Sinks.Many<List<Tool>> toolsChanged = Sinks.many().multicast().directBestEffort();
        Duration longest = List.of(properties.discoveryTimeout(), properties.pingTimeout(), properties.callTimeout())
                .stream().max(Duration::compareTo).orElseThrow();
        // Our own bounds are per operation; the SDK's must never fire before them.
        McpAsyncClient client = McpClient.async(transport)
                .clientInfo(new Implementation("tether", "0.1.0"))
                .requestTimeout(longest.plusSeconds(1))
                .initializationTimeout(longest.plusSeconds(1))
                .toolsChangeConsumer(tools -> Mono.fromRunnable(() -> toolsChanged.tryEmitNext(tools)))
                .build();
        return new McpSession(server.name(), client, transport, properties, toolsChanged);
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
