package dev.tether.agent.codemode;

import java.net.URI;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.springframework.web.util.UriComponentsBuilder;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.tether.execution.ResumeAction;

/**
 * One agent's session on {@code /mcp}: what it said it can do at {@code initialize}, the executions it paused (it
 * alone may resume them there), the requests Tether sent its client and awaits answers to, the users' answers from the
 * web UI for its executions, and its stream of messages Tether sends unasked ({@code GET /mcp}).
 */
final class CodeModeSession {

    /** A user's or client's answer to a paused execution's question. */
    record Answer(ResumeAction action, @Nullable Map<String, Object> content) {
    }

    private final String id;
    private final ElicitationMode mode;
    private final boolean formQuestions;
    private final boolean urlQuestions;
    private final URI origin;
    private final Set<String> paused = ConcurrentHashMap.newKeySet();
    private final Map<String, Sinks.One<Answer>> approvals = new ConcurrentHashMap<>();
    private final Map<String, Sinks.One<Map<String, Object>>> asked = new ConcurrentHashMap<>();
    private final Map<Object, Sinks.One<Boolean>> inFlight = new ConcurrentHashMap<>();
    private final AtomicLong requestIds = new AtomicLong();
    private final AtomicBoolean streamOpen = new AtomicBoolean();
    /** What goes out on the session's {@code GET} stream; kept while no stream is open, until one is. */
    private final Sinks.Many<String> outbox = Sinks.many().multicast().onBackpressureBuffer(256, false);

    CodeModeSession(String id, ElicitationMode mode, boolean formQuestions, boolean urlQuestions, URI origin) {
        this.id = id;
        this.mode = mode;
        this.formQuestions = formQuestions;
        this.urlQuestions = urlQuestions;
        this.origin = origin;
    }

    String id() {
        return id;
    }

    ElicitationMode mode() {
        return mode;
    }

    boolean formQuestions() {
        return formQuestions;
    }

    boolean urlQuestions() {
        return urlQuestions;
    }

    /** Executor's approval URL: the web UI's resume page, on the address the agent reached, naming this session. */
    String approvalUrl(String executionId) {
        return UriComponentsBuilder.fromUri(origin).replacePath("/resume/").path(executionId).replaceQuery(null).fragment(null)
                .queryParam("mcp_session_id", id).encode().build().toUriString();
    }

    // ---- executions it paused -------------------------------------------------------------------

    void paused(String executionId) {
        paused.add(executionId);
    }

    /** Takes the session's claim on a paused execution; false when it has none (unknown, finished, another's). */
    boolean takePaused(String executionId) {
        return paused.remove(executionId);
    }

    boolean owns(String executionId) {
        return paused.contains(executionId);
    }

    /** The paused executions it alone may resume, taken: the session ends. */
    Set<String> takeAllPaused() {
        Set<String> taken = Set.copyOf(paused);
        paused.removeAll(taken);
        return taken;
    }

    // ---- the web UI's answers (browser mode) ----------------------------------------------------

    /** A user's answer given in the web UI; the first one counts. */
    void approved(String executionId, Answer answer) {
        approvals.computeIfAbsent(executionId, ignored -> Sinks.one()).tryEmitValue(answer);
    }

    /** The user's answer for {@code executionId}, once given; taken, so that it answers one resume only. */
    Mono<Answer> approval(String executionId) {
        Sinks.One<Answer> sink = approvals.computeIfAbsent(executionId, ignored -> Sinks.one());
        return sink.asMono().doOnNext(answer -> approvals.remove(executionId, sink));
    }

    // ---- requests to the client (native mode) ---------------------------------------------------

    /** Sends {@code method} to the client on the session's stream; the Mono answers with its result. */
    Mono<Map<String, Object>> ask(String method, Map<String, Object> params, java.util.function.Function<Object, String> write) {
        return Mono.defer(() -> {
            String requestId = "tether-" + requestIds.incrementAndGet();
            Sinks.One<Map<String, Object>> answer = Sinks.one();
            asked.put(requestId, answer);
            Map<String, Object> request = new java.util.LinkedHashMap<>();
            request.put("jsonrpc", "2.0");
            request.put("id", requestId);
            request.put("method", method);
            request.put("params", params);
            Sinks.EmitResult sent;
            synchronized (outbox) { // two executions of one session may ask at once; a sink takes one message at a time
                sent = outbox.tryEmitNext(write.apply(request));
            }
            if (sent.isFailure()) {
                asked.remove(requestId);
                return Mono.error(new IllegalStateException("the session's stream takes no more messages"));
            }
            return answer.asMono().doFinally(signal -> asked.remove(requestId));
        });
    }

    /** The client's answer to a request Tether sent: its result, or an error for the asker. */
    void answered(Object requestId, @Nullable Map<String, Object> result, @Nullable String error) {
        Sinks.One<Map<String, Object>> waiting = asked.get(String.valueOf(requestId));
        if (waiting == null) {
            return;
        }
        if (error != null) {
            waiting.tryEmitError(new IllegalStateException(error));
        }
        else {
            waiting.tryEmitValue(result == null ? Map.of() : result);
        }
    }

    Sinks.Many<String> outbox() {
        return outbox;
    }

    /** Claims the session's one {@code GET} stream; false when one is open already. */
    boolean openStream() {
        return streamOpen.compareAndSet(false, true);
    }

    void closeStream() {
        streamOpen.set(false);
    }

    // ---- calls in flight -------------------------------------------------------------------------

    Sinks.One<Boolean> started(Object requestId) {
        Sinks.One<Boolean> cancel = Sinks.one();
        inFlight.put(requestId, cancel);
        return cancel;
    }

    void finished(Object requestId, Sinks.One<Boolean> cancel) {
        inFlight.remove(requestId, cancel);
    }

    /** {@code notifications/cancelled} for one request. */
    void cancel(@Nullable Object requestId) {
        Sinks.One<Boolean> cancel = requestId == null ? null : inFlight.get(requestId);
        if (cancel != null) {
            cancel.tryEmitValue(true);
        }
    }

    /** The session ends: its calls are cancelled, its stream ends, its questions are left unanswered (cancelled). */
    void end() {
        inFlight.values().forEach(cancel -> cancel.tryEmitValue(true));
        asked.values().forEach(answer -> answer.tryEmitError(new IllegalStateException("the MCP session ended")));
        outbox.tryEmitComplete();
    }
}
