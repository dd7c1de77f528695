package dev.tether.mcp;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCRequest;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCResponse.JSONRPCError;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import tools.jackson.core.io.JsonStringEncoder;

import dev.tether.process.ChildProcess;
import dev.tether.process.ChildStdinClosedException;

/**
 * MCP over a child's stdin and stdout, one JSON-RPC message a line. Unlike the SDK's stdio transport it
 * does not own the process: the pipeline that started the child tears it down, so closing this transport
 * only stops reading. It reports a server that exits or writes non-JSON through {@link #failure()}, which
 * sessions race against every request so that nothing waits for an answer that cannot come.
 *
 * <p>A {@code tools/call} does not go through the SDK ({@link #callTool}): its line is written here, and its answer is
 * taken off stdout by its id, before the SDK would read the line into a map,
 * convert it into a response and convert that into a {@code CallToolResult}; the result goes on as the server wrote it.
 * Everything else (the handshake, pings, listings, the server's own requests and notifications) is the SDK's.
 */
final class ChildProcessTransport implements McpClientTransport {

    private static final Duration EXIT_CODE_WAIT = Duration.ofSeconds(1);
    private static final Duration EXIT_SETTLE = Duration.ofMillis(100);

    private final String server;
    private final ChildProcess child;
    private final McpJsonMapper json;
    private final Redaction redaction;
    private final Sinks.One<McpServerException> failure = Sinks.one();
    /** The server's failure once known, for the calls that start after it. */
    private volatile @Nullable McpServerException failed;
    private volatile boolean closed;
    private volatile @Nullable Disposable inbound;
    /** {@code tools/call}s sent by {@link #callTool} and not answered yet, by request id. */
    private final Map<String, MonoSink<ToolAnswer>> calls = new ConcurrentHashMap<>();
    private final AtomicLong callIds = new AtomicLong();

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
                .filter(line -> !line.isBlank() && !answeredCall(line))
                .map(this::parse)
                .flatMap(message -> handler.apply(Mono.just(message)))
                .then();
        // A grandchild may hold stdout open after the server itself died, so its exit ends the session too,
        // a moment later, to let answers it wrote before exiting arrive first.
        Mono<Void> serverExit = child.onExit().delayElement(EXIT_SETTLE).then();
        return Mono.fromRunnable(() -> inbound = Mono.firstWithSignal(messages, serverExit)
                .then(Mono.defer(this::exited))
                .subscribe(ignored -> { }, error -> failed(asServerFailure(error))));
    }

    private void failed(McpServerException why) {
        failed = why;
        failure.tryEmitValue(why);
        calls.values().forEach(call -> call.error(why));
    }

    /**
     * Calls {@code tool} with {@code arguments}, asking for progress under {@code progressToken} when there is
     * one; the request's id goes into {@code slot} as it is sent, for {@code notifications/cancelled}. Answers the result
     * as the server wrote it; fails with {@link McpError} when the server answers a JSON-RPC error, and at once when the
     * server has failed or fails. Cancelling forgets the call; telling the server is the caller's.
     */
    Mono<ToolAnswer> callTool(RequestIdSlot slot, String tool, Map<String, Object> arguments, @Nullable String progressToken) {
        return Mono.<ToolAnswer>create(call -> {
            String id = "tether-call-" + callIds.incrementAndGet();
            calls.put(id, call);
            call.onDispose(() -> calls.remove(id));
            McpServerException known = failed;
            if (known != null || closed) {
                call.error(known != null ? known : terminated());
                return;
            }
            String written;
            try {
                written = json.writeValueAsString(arguments);
            } catch (IOException | RuntimeException unwritable) { // Jackson 3 fails unchecked
                call.error(new IllegalArgumentException("the arguments of " + tool + " are not JSON: " + unwritable.getMessage(), unwritable));
                return;
            }
            StringBuilder line = new StringBuilder(96 + tool.length() + written.length()).append("{\"jsonrpc\":\"2.0\",\"id\":\"").append(id)
                    .append("\",\"method\":\"tools/call\",\"params\":{\"name\":\"");
            JsonStringEncoder.getInstance().quoteAsString(tool, line);
            line.append("\",\"arguments\":").append(written);
            if (progressToken != null) {
                line.append(",\"_meta\":{\"progressToken\":\"");
                JsonStringEncoder.getInstance().quoteAsString(progressToken, line);
                line.append("\"}");
            }
            slot.set(id);
            try {
                child.write(line.append("}}").toString());
            } catch (ChildStdinClosedException stdinClosed) {
                call.error(stdinClosed);
            }
        }).onErrorResume(ChildStdinClosedException.class, this::exitedInstead);
    }

    /** Whether {@code line} answers a call of {@link #callTool}, which then has its answer. */
    private boolean answeredCall(String line) {
        if (calls.isEmpty()) {
            return false;
        }
        ResponseScan scan = ResponseScan.of(line);
        if (scan == null || scan.id() == null) {
            return false;
        }
        MonoSink<ToolAnswer> call = calls.remove(scan.id());
        if (call == null) {
            return false;
        }
        if (scan.valueStart() < 0) {
            call.error(new McpServerException(server, redaction.apply("MCP server '" + server
                    + "' answered tools/call with neither a result nor an error object: " + line), Optional.empty()));
        } else if (scan.failed()) {
            try {
                call.error(new McpError(readError(line.substring(scan.valueStart(), scan.valueEnd()))));
            } catch (McpServerException unreadable) {
                call.error(unreadable);
                throw unreadable; // the session fails, as it does for any line that is no JSON-RPC message
            }
        } else {
            call.success(ToolAnswer.sent(line.substring(scan.valueStart(), scan.valueEnd()), scan.toolError()));
        }
        return true;
    }

    private JSONRPCError readError(String error) {
        try {
            return json.readValue(error, JSONRPCError.class);
        } catch (IOException | RuntimeException unreadable) { // Jackson 3 fails unchecked
            throw McpServerException.notJson(server, error, redaction);
        }
    }

    /** What a call still waiting hears when its session closes: the SDK's words for its own requests. */
    private RuntimeException terminated() {
        McpServerException known = failed;
        return known != null ? known : new RuntimeException("MCP session with server terminated");
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
    private <T> Mono<T> exitedInstead(ChildStdinClosedException closed) {
        return this.<T>failure().timeout(EXIT_CODE_WAIT.multipliedBy(3), Mono.error(closed));
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.fromRunnable(() -> {
            closed = true;
            RuntimeException terminated = terminated();
            calls.values().forEach(call -> call.error(terminated));
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
