package dev.tether.mcp;

import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A transport whose failed {@code connect} becomes a {@link McpServerException} on {@link #failure()}: the SDK's SSE
 * transport only logs a failed connect and leaves the handshake waiting for its timeout.
 */
final class ConnectWatch implements McpClientTransport {

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
        return transport.connect(handler).doOnError(error -> failure.tryEmitValue(McpSessions.unreachable(remote, transportName, error)));
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
