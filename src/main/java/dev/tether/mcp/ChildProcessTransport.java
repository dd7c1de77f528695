package dev.tether.mcp;

import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCRequest;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.tether.process.ChildProcess;
import dev.tether.process.ChildStdinClosedException;

/**
 * MCP over a child's stdin and stdout, one JSON-RPC message a line. Unlike the SDK's stdio transport it
 * does not own the process: the pipeline that started the child tears it down, so closing this transport
 * only stops reading. It reports a server that exits or writes non-JSON through {@link #failure()}, which
 * sessions race against every request so that nothing waits for an answer that cannot come.
 */
final class ChildProcessTransport implements McpClientTransport {

    private static final Duration EXIT_CODE_WAIT = Duration.ofSeconds(1);
    private static final Duration EXIT_SETTLE = Duration.ofMillis(100);

    private final String server;
    private final ChildProcess child;
    private final McpJsonMapper json;
    private final Redaction redaction;
    private final Sinks.One<McpServerException> failure = Sinks.one();
    private volatile Disposable inbound;

    ChildProcessTransport(String server, ChildProcess child, McpJsonMapper json) {
        this.server = server;
        this.child = child;
        this.json = json;
        this.redaction = Redaction.of(child.spec().env().values());
    }

    @Override
    public Mono<Void> connect(Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler) {
        // The SDK hands us the session's inbound handler and expects the transport to drive it for the
        // session's lifetime; the subscription is disposed by closeGracefully.
        Mono<Void> messages = child.stdout()
                .filter(line -> !line.isBlank())
                .map(this::parse)
                .flatMap(message -> handler.apply(Mono.just(message)))
                .then();
        // A grandchild may hold stdout open after the server itself died, so its exit ends the session too,
        // a moment later, to let answers it wrote before exiting arrive first.
        Mono<Void> serverExit = child.onExit().delayElement(EXIT_SETTLE).then();
        return Mono.fromRunnable(() -> inbound = Mono.firstWithSignal(messages, serverExit)
                .then(Mono.defer(this::exited))
                .subscribe(ignored -> { }, error -> failure.tryEmitValue(asServerFailure(error))));
    }

    /** Never emits; errors when the server has exited or broken the protocol. */
    <T> Mono<T> failure() {
        return failure.asMono().flatMap(Mono::error);
    }

    @Override
    public Mono<Void> sendMessage(JSONRPCMessage message) {
        return Mono.deferContextual(context -> {
            // The SDK passes the requester's context down to us: that is how a cancelled call learns its id.
            if (message instanceof JSONRPCRequest request) {
                context.<RequestIdSlot>getOrEmpty(RequestIdSlot.class).ifPresent(slot -> slot.set(request.id()));
            }
            return Mono.fromCallable(() -> json.writeValueAsString(message)).flatMap(child::send)
                    .onErrorResume(ChildStdinClosedException.class, this::exitedInstead);
        });
    }

    /**
     * A child that is gone before we could write to it: the broken pipe shows before its exit is seen, and the SDK
     * would report only "Client failed to initialize". Wait, bounded, for the exit and fail with its code and last
     * words instead; the write's own error if the exit does not come.
     */
    private Mono<Void> exitedInstead(ChildStdinClosedException closed) {
        return this.<Void>failure().timeout(EXIT_CODE_WAIT.multipliedBy(3), Mono.error(closed));
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.fromRunnable(() -> {
            Disposable reading = inbound;
            if (reading != null) {
                reading.dispose();
            }
        });
    }

    @Override
    public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
        return json.convertValue(data, typeRef);
    }

    private JSONRPCMessage parse(String line) {
        try {
            return McpSchema.deserializeJsonRpcMessage(json, line);
        }
        catch (IOException | RuntimeException ex) {
            throw McpServerException.notJson(server, line, redaction);
        }
    }

    private Mono<Void> exited() {
        return child.onExit()
                .timeout(EXIT_CODE_WAIT, Mono.empty())
                .map(Optional::of)
                .defaultIfEmpty(Optional.empty())
                // Its last words (why it exited) may still be in the pipe when its exit is seen.
                .delayUntil(code -> child.stderrClosed().timeout(EXIT_CODE_WAIT, Mono.empty()))
                .flatMap(code -> Mono.error(McpServerException.exited(server, code, child.stderrTail(), redaction)));
    }

    private McpServerException asServerFailure(Throwable error) {
        return error instanceof McpServerException known ? known
                : McpServerException.redacted(server, "MCP server '" + server + "' session failed: " + error, error, redaction);
    }
}
