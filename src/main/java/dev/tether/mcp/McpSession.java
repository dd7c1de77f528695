package dev.tether.mcp;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCNotification;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Implementation;
import io.modelcontextprotocol.spec.McpSchema.InitializeResult;
import io.modelcontextprotocol.spec.McpSchema.ListToolsResult;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.context.Context;

import dev.tether.tracing.Spans;

/**
 * An initialized MCP conversation with one server. Every operation is bounded, and fails at once when the
 * server exits or breaks the protocol instead of waiting for its timeout. A session lives as long as the
 * subscription of {@link McpSessions#open} that emitted it: whoever holds it must not outlive that.
 */
public final class McpSession {

    private final String server;
    /** The handshake era's client and transport; null for a server of MCP 2026-07-28, which {@link #stateless} speaks to. */
    private final @Nullable McpAsyncClient client;
    private final @Nullable McpClientTransport transport;
    /** The transport when it is a stdio child's, whose tool calls bypass the SDK. */
    private final @Nullable ChildProcessTransport stdio;
    private final @Nullable StatelessServerClient stateless;
    private final Mono<Void> serverFailure;
    private final McpProperties properties;
    private final Sinks.Many<List<Tool>> toolsChanged;
    private final Sinks.Many<ProgressNotification> progress;
    private final AtomicLong progressTokens = new AtomicLong();
    private final Redaction redaction;
    private final CallQuestions questions;
    private final SentBearer bearer;
    private final ObservationRegistry observations;

    /**
     * @param serverFailure never completes; errors as soon as the server is known to be gone (a stdio child
     *                      that exited), so no request waits for its timeout
     * @param progress      every {@code notifications/progress} the server sends, whatever its token
     */
    McpSession(String server, McpAsyncClient client, McpClientTransport transport, Mono<Void> serverFailure,
            McpProperties properties, Sinks.Many<List<Tool>> toolsChanged, Sinks.Many<ProgressNotification> progress,
            CallQuestions questions, Redaction redaction, SentBearer bearer, ObservationRegistry observations) {
        this.observations = observations;
        this.stateless = null;
        this.questions = questions;
        this.bearer = bearer;
        this.redaction = redaction;
        this.server = server;
        this.client = client;
        this.transport = transport;
        this.stdio = transport instanceof ChildProcessTransport child ? child : null;
        this.serverFailure = serverFailure;
        this.properties = properties;
        this.toolsChanged = toolsChanged;
        this.progress = progress;
    }

    /** A session with a server of MCP 2026-07-28: no handshake, no session on the wire, one request each. */
    McpSession(String server, StatelessServerClient stateless, McpProperties properties, Redaction redaction, SentBearer bearer,
            ObservationRegistry observations) {
        this.observations = observations;
        this.server = server;
        this.client = null;
        this.transport = null;
        this.stdio = null;
        this.stateless = stateless;
        this.serverFailure = Mono.never();
        this.properties = properties;
        this.toolsChanged = Sinks.many().multicast().directBestEffort();
        this.progress = Sinks.many().multicast().directBestEffort();
        this.questions = new CallQuestions();
        this.redaction = redaction;
        this.bearer = bearer;
    }

    /** Emits the server's new tool list each time it announces {@code notifications/tools/list_changed}. */
    public Flux<List<Tool>> toolsChanged() {
        return toolsChanged.asFlux();
    }

    /** Never emits; errors as soon as the server exits or breaks the protocol. */
    <T> Mono<T> failure() {
        return serverFailure.<T>then(Mono.never()).onErrorMap(error -> redaction.apply(server, error));
    }

    /** What the server said of itself in the handshake. */
    public Optional<Implementation> serverInfo() {
        return stateless != null ? stateless.serverInfo() : Optional.ofNullable(handshake().getServerInfo());
    }

    public Optional<String> instructions() {
        return stateless != null ? stateless.instructions() : Optional.ofNullable(handshake().getServerInstructions());
    }

    /** Whether the server speaks MCP 2026-07-28 (else the handshake era). */
    public boolean stateless() {
        return stateless != null;
    }

    private McpAsyncClient handshake() {
        if (client == null) {
            throw new IllegalStateException("a session of MCP 2026-07-28 has no handshake client");
        }
        return client;
    }

    public String server() {
        return server;
    }

    /** The handshake; for a server of MCP 2026-07-28, which has none, its {@code server/discover} (kept from the probe). */
    Mono<Void> initialize() {
        return Spans.around(observations, "tether.mcp.initialize", KeyValues.of("tether.server", server),
                stateless != null ? bounded(stateless.discover(), "server/discover", properties.discoveryTimeout())
                        : bounded(handshake().initialize(), "initialize", properties.discoveryTimeout()).then());
    }

    /** Answers when the server answered a ping: MCP's liveness check. */
    public Mono<Void> ping() {
        return masked(bounded(stateless != null ? stateless.ping() : handshake().ping().then(), "ping", properties.pingTimeout()).then());
    }

    /**
     * Lists every tool, following {@code nextCursor} for at most {@code maxToolPages} pages. A page that fails
     * after the first ends the listing with what arrived, marked incomplete; a failing first page fails.
     */
    public Mono<ToolCatalog> listTools() {
        if (stateless != null) {
            StatelessServerClient modern = stateless;
            return masked(renewingOnRefusal(() -> bounded(modern.listTools(), "discovery", properties.discoveryTimeout())));
        }
        McpAsyncClient client = handshake();
        return masked(renewingOnRefusal(() -> bounded(client.listTools(null), "discovery", properties.discoveryTimeout()))
                .flatMap(first -> collect(first, new ArrayList<>(), 1)));
    }

    /**
     * Calls a tool. A call that is cancelled or outlives its timeout is abandoned with
     * {@code notifications/cancelled}, so the server can stop working on it and the session stays usable. When
     * the call's context holds a {@link ProgressListener}, the server is asked for progress and the listener
     * hears it until the call ends. A stdio server's answer comes as it wrote it ({@link ToolAnswer}).
     */
    public Mono<ToolAnswer> callTool(String tool, Map<String, Object> arguments) {
        return Spans.around(observations, "tether.mcp.call", KeyValues.of("tether.server", server, "tether.tool", tool),
                unobservedCall(tool, arguments));
    }

    private Mono<ToolAnswer> unobservedCall(String tool, Map<String, Object> arguments) {
        if (stateless != null) {
            StatelessServerClient modern = stateless;
            return masked(renewingOnRefusal(() -> Mono.deferContextual(context -> questions.during(
                    ElicitationHandler.of(context),
                    asker -> limited(watched(modern.callTool(tool, arguments, asker::ask,
                                    context.<ProgressListener>getOrEmpty(ProgressListener.class).orElse(null))),
                            "tools/call " + tool, properties.callTimeout(), asker.deadline(properties.callTimeout(), RequestTimer.SHARED)))))
                    .map(ToolAnswer::of));
        }
        Mono<ToolAnswer> call = Mono.deferContextual(context -> {
            ProgressListener listener = context.getOrDefault(ProgressListener.class, null);
            return listener == null ? call(tool, arguments, null) : callWithProgress(tool, arguments, listener);
        });
        // A stdio child has no credentials to renew.
        return masked(stdio != null ? call : renewingOnRefusal(() -> call));
    }

    /**
     * A request the remote server refused for credentials (401, 403: a token revoked or rotated before its recorded
     * expiry) goes once more with a renewed token, when the session has an OAuth grant to renew. One refused for want
     * of scope does not: a renewed token has the same scope; the grant learns what to ask the user for next time.
     */
    private <T> Mono<T> renewingOnRefusal(Supplier<Mono<T>> request) {
        return Mono.defer(() -> {
            long sentUnder = bearer.generation();
            return request.get().onErrorResume(refused -> !(refused instanceof AuthorizationExpiredException)
                            && RemoteServer.wantsCredentials(refused),
                    refused -> ScopeChallenge.of(refused)
                            .<Mono<T>>map(scope -> Mono.error(new InsufficientScopeException(server, scope, bearer.needsScope(scope))))
                            .orElseGet(() -> bearer.renew(sentUnder).flatMap(renewed -> renewed ? request.get() : Mono.error(refused))));
        });
    }

    /**
     * The SDK's client hears progress for the whole session ({@code progressConsumer}), not per request: each
     * call that wants progress gets a token unique in this session, and takes the notifications with its token
     * from the session-wide stream for as long as the call runs. Listening starts before the request is sent.
     */
    private Mono<ToolAnswer> callWithProgress(String tool, Map<String, Object> arguments, ProgressListener listener) {
        String token = "tether-" + progressTokens.incrementAndGet();
        Mono<ToolAnswer> relay = progress.asFlux()
                .filter(notification -> token.equals(String.valueOf(notification.progressToken())))
                .doOnNext(listener::onProgress)
                .then(Mono.never());
        return relay.or(call(tool, arguments, token));
    }

    /**
     * The server's questions during the call go to the {@link ElicitationHandler} of the call's context (or are
     * accepted, as Executor does outside an execution); the call's timeout stops while one waits for its answer. A call
     * that cannot ask anyone is not one questions go to, and its timeout never stops.
     */
    private Mono<ToolAnswer> call(String tool, Map<String, Object> arguments, @Nullable String progressToken) {
        return Mono.deferContextual(context -> {
            ElicitationHandler handler = ElicitationHandler.of(context);
            return handler == ElicitationHandler.ACCEPT_ALL ? call(tool, arguments, progressToken, null)
                    : questions.during(handler, asker -> call(tool, arguments, progressToken, asker));
        });
    }

    private Mono<ToolAnswer> call(String tool, Map<String, Object> arguments, @Nullable String progressToken, CallQuestions.@Nullable Asker asker) {
        Duration timeout = properties.callTimeout();
        String name = "tools/call " + tool;
        ChildProcessTransport child = stdio;
        return Mono.usingWhen(Mono.fromSupplier(RequestIdSlot::new),
                slot -> {
                    if (child != null) {
                        Mono<ToolAnswer> answer = child.callTool(slot, tool, arguments, progressToken);
                        // the transport fails the call itself when the child fails: no race against its failure
                        return asker == null ? limited(answer, name, timeout) : limited(answer, name, timeout, asker.deadline(timeout, RequestTimer.SHARED));
                    }
                    CallToolRequest request = progressToken == null ? new CallToolRequest(tool, arguments)
                            : new CallToolRequest(tool, arguments, Map.of("progressToken", progressToken));
                    Mono<CallToolResult> sent = watched(handshake().callTool(request));
                    return (asker == null ? limited(sent, name, timeout) : limited(sent, name, timeout, asker.deadline(timeout, RequestTimer.SHARED)))
                            .contextWrite(Context.of(RequestIdSlot.class, slot))
                            .map(ToolAnswer::of);
                },
                slot -> Mono.empty(),
                (slot, error) -> error instanceof McpTimeoutException
                        ? abandon(slot, Objects.requireNonNull(error.getMessage())) : Mono.empty(),
                slot -> abandon(slot, "cancelled by the client"));
    }

    private Mono<Void> abandon(RequestIdSlot slot, String reason) {
        Object requestId = slot.get();
        if (requestId == null) {
            return Mono.empty();
        }
        McpClientTransport transport = this.transport;
        return transport != null && handshake().isInitialized() ? transport.sendMessage(new JSONRPCNotification(McpSchema.JSONRPC_VERSION,
                        "notifications/cancelled", Map.of("requestId", requestId, "reason", reason)))
                .onErrorResume(error -> Mono.empty()) : Mono.empty();
    }

    void close() {
        if (client != null) {
            client.close();
        }
    }

    /** Says goodbye for at most the close bound; a server that does not take it is dropped. */
    Mono<Void> closeGracefully() {
        McpAsyncClient client = this.client;
        if (client == null) {
            return Mono.empty(); // nothing is open between the requests of MCP 2026-07-28
        }
        return client.closeGracefully()
                .timeout(properties.closeTimeout())
                .onErrorResume(error -> Mono.fromRunnable(client::close));
    }

    private Mono<ToolCatalog> collect(ListToolsResult page, List<Tool> tools, int pages) {
        tools.addAll(page.tools());
        String cursor = page.nextCursor();
        if (cursor == null || cursor.isEmpty()) {
            return Mono.just(new ToolCatalog(tools, Optional.empty()));
        }
        if (pages >= properties.maxToolPages()) {
            return Mono.just(new ToolCatalog(tools, Optional.of("stopped after " + pages + " pages of tools/list")));
        }
        return bounded(handshake().listTools(cursor), "discovery", properties.discoveryTimeout())
                .flatMap(next -> collect(next, tools, pages + 1))
                .onErrorResume(error -> !(error instanceof McpServerException) || error instanceof McpTimeoutException,
                        error -> Mono.just(new ToolCatalog(tools,
                                Optional.of("tools/list page " + (pages + 1) + " failed: "
                                        + redaction.apply(server, error).getMessage()))));
    }

    /** {@code operation}, watched for the server's failure and bounded by {@code timeout}. */
    private <T> Mono<T> bounded(Mono<T> operation, String name, Duration timeout) {
        return limited(watched(operation), name, timeout);
    }

    /** Bounded by {@code timeout}, and no more: for an operation that is told of the server's failure by itself. */
    private <T> Mono<T> limited(Mono<T> operation, String name, Duration timeout) {
        return operation
                .timeout(timeout, RequestTimer.SHARED)
                .onErrorMap(TimeoutException.class, ex -> new McpTimeoutException(server, name, timeout));
    }

    /** Bounded by {@code deadline}, which fires when {@code timeout} has run out. */
    private <T> Mono<T> limited(Mono<T> operation, String name, Duration timeout, Publisher<?> deadline) {
        return operation
                .timeout(deadline)
                .onErrorMap(TimeoutException.class, ex -> new McpTimeoutException(server, name, timeout));
    }

    private <T> Mono<T> watched(Mono<T> operation) {
        return operation
                .or(this.<T>failure())
                // A dying server closes the session, and the SDK then fails what was pending with a bare "session
                // terminated": once the server is known to have failed, say why instead.
                .onErrorResume(error -> !(error instanceof McpServerException), error -> this.<T>failure().or(Mono.error(error)));
    }

    /**
     * What a server says in an error may quote the values it was given (a 500 body that echoes its Authorization
     * header): masked before anything stores, answers or logs it. Not for {@link #initialize}, whose failures
     * {@link McpSessions} describes (and masks) itself.
     */
    private <T> Mono<T> masked(Mono<T> operation) {
        return operation.onErrorMap(error -> redaction.apply(server, error));
    }
}
