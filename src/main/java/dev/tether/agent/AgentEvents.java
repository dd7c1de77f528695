package dev.tether.agent;

import java.time.Duration;

import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import dev.tether.security.ApiProperties;

/**
 * Event streams to agents, as both MCP transports write them: each JSON-RPC message is an event named
 * {@code message}, and a stream with nothing to say sends a comment every {@code tether.api.stream-keep-alive}
 * so that proxies do not cut it as idle.
 */
@Component
public final class AgentEvents {

    private final AgentProtocol protocol;
    private final Duration keepAlive;

    @Autowired
    AgentEvents(AgentProtocol protocol, ApiProperties properties) {
        this(protocol, properties.streamKeepAlive());
    }

    AgentEvents(AgentProtocol protocol, Duration keepAlive) {
        this.protocol = protocol;
        this.keepAlive = keepAlive;
    }

    ServerSentEvent<String> message(JSONRPCMessage message) {
        return ServerSentEvent.<String>builder().event("message").data(protocol.write(message)).build();
    }

    /**
     * {@code events} with keep-alive comments between them, ending when they end. The first comment goes out at
     * once, so that the agent has the response headers before the first event, however long that takes.
     */
    public Flux<ServerSentEvent<String>> keptAlive(Flux<ServerSentEvent<String>> events) {
        return events.publish(shared -> Flux.merge(shared,
                Flux.interval(Duration.ZERO, keepAlive)
                        .map(tick -> ServerSentEvent.<String>builder().comment("keep-alive").build())
                        .takeUntilOther(shared.then())));
    }

    public static ResponseEntity.BodyBuilder stream() {
        return ResponseEntity.ok().contentType(MediaType.TEXT_EVENT_STREAM).cacheControl(CacheControl.noStore());
    }
}
