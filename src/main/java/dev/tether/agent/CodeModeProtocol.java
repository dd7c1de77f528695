package dev.tether.agent;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.ErrorCodes;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCRequest;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.agent.CodeModeSession.Answer;
import dev.tether.agent.CodeModeTools.Checked;
import dev.tether.agent.CodeModeTools.ResumeArguments;
import dev.tether.execution.ExecutionAnswer;
import dev.tether.execution.ExecutionNotFoundException;
import dev.tether.execution.Executions;
import dev.tether.execution.ResumeAction;
import dev.tether.execution.ResumeContentException;

/**
 * Executor's {@code /mcp} as its agents speak it ({@code packages/hosts/mcp/src/tool-server.ts}): {@code execute}
 * runs code on Tether's {@link Executions}, and a paused execution's question goes where the session's
 * {@link ElicitationMode} sends it. Model: the paused answer goes to the agent, whose {@code resume} answers it.
 * Browser: the agent gets the web UI's approval URL, and its {@code resume} waits for the user's answer there.
 * Native: the question goes to the agent's client as {@code elicitation/create}, whose answer resumes the execution
 * at once; a client that cannot take the question (no such capability, no stream, no answer in time) cancels it,
 * as Executor's relay does. Every answer is JSON text of one JSON-RPC response.
 */
@Component
final class CodeModeProtocol {

    private static final Logger log = LoggerFactory.getLogger(CodeModeProtocol.class);
    private static final TypeRef<Map<String, Object>> OBJECT = new TypeRef<>() {
    };
    private static final TypeRef<Object> ANY = new TypeRef<>() {
    };
    private static final String ELICIT = "elicitation/create";
    private static final Map<String, Object> NO_FIELDS = Map.of("type", "object", "properties", Map.of());

    private final Executions executions;
    private final ExecuteDescription description;
    private final AgentProperties properties;
    private final McpJsonMapper json = McpJsonDefaults.getMapper();

    CodeModeProtocol(Executions executions, ExecuteDescription description, AgentProperties properties) {
        this.executions = executions;
        this.description = description;
        this.properties = properties;
    }

    /** Executor's answer to {@code initialize}: its server name and version, tools that may change. */
    String initialize(JSONRPCRequest request, String version) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("protocolVersion", version);
        result.put("capabilities", Map.of("tools", Map.of("listChanged", true)));
        result.put("serverInfo", Map.of("name", "executor", "version", "1.0.0"));
        return response(request.id(), write(result));
    }

    /** The answer to one request of {@code session}; empty when the agent cancelled it, for then none is owed. */
    Mono<String> answer(CodeModeSession session, JSONRPCRequest request) {
        return switch (request.method()) {
            case McpSchema.METHOD_PING -> Mono.just(response(request.id(), "{}"));
            case McpSchema.METHOD_TOOLS_LIST -> description.describe()
                    .map(text -> response(request.id(), write(Map.of("tools", CodeModeTools.list(session.mode(), text)))));
            case McpSchema.METHOD_TOOLS_CALL -> call(session, request);
            default -> Mono.just(error(request.id(), ErrorCodes.METHOD_NOT_FOUND, "Method not found"));
        };
    }

    private Mono<String> call(CodeModeSession session, JSONRPCRequest request) {
        Map<String, Object> params = params(request.params());
        Object name = params.get("name");
        if (!(name instanceof String tool)) {
            return Mono.just(error(request.id(), ErrorCodes.INVALID_PARAMS, "tools/call needs params {name, arguments?}"));
        }
        Object arguments = params.get("arguments");
        Mono<String> result;
        if (!CodeModeTools.offered(session.mode(), tool)) {
            result = Mono.just(CodeModeTools.protocolError("Tool " + tool + " not found"));
        }
        else if (CodeModeTools.EXECUTE.equals(tool)) {
            Checked<String> code = CodeModeTools.code(arguments);
            result = code.refusal() != null ? Mono.just(code.refusal()) : execute(session, code.value());
        }
        else {
            Checked<ResumeArguments> resume = CodeModeTools.resume(session.mode(), arguments);
            result = resume.refusal() != null ? Mono.just(resume.refusal())
                    : session.mode() == ElicitationMode.BROWSER ? resumeAfterApproval(session, resume.value().executionId())
                    : resume(session, resume.value());
        }
        return Mono.usingWhen(Mono.fromSupplier(() -> session.started(request.id())),
                cancel -> result.onErrorResume(failed -> Mono.just(internalError(tool, failed)))
                        .map(text -> response(request.id(), text))
                        .takeUntilOther(cancel.asMono()),
                cancel -> Mono.fromRunnable(() -> session.finished(request.id(), cancel)));
    }

    // ---- execute ---------------------------------------------------------------------------------

    private Mono<String> execute(CodeModeSession session, String code) {
        if (session.mode() == ElicitationMode.NATIVE) {
            return executions.execute(code).flatMap(answer -> relay(session, answer)).map(CodeModeTools::result);
        }
        return executions.execute(code).map(answer -> pausedOrDone(session, answer));
    }

    /** A pause becomes the session's to resume; the agent sees it as its mode has it. */
    private String pausedOrDone(CodeModeSession session, ExecutionAnswer answer) {
        Optional<String> paused = pausedId(answer);
        if (paused.isEmpty()) {
            return CodeModeTools.result(answer);
        }
        session.paused(paused.get());
        return session.mode() == ElicitationMode.BROWSER
                ? CodeModeTools.approvalRequired(paused.get(), session.approvalUrl(paused.get()))
                : CodeModeTools.result(answer);
    }

    // ---- resume (model) --------------------------------------------------------------------------

    private Mono<String> resume(CodeModeSession session, ResumeArguments arguments) {
        String id = arguments.executionId();
        if (!session.takePaused(id)) {
            return Mono.just(CodeModeTools.noPausedExecution(id));
        }
        ResumeAction action = ResumeAction.parse(arguments.action()).orElseThrow();
        Map<String, Object> content = CodeModeTools.content(arguments.content(), this::parse).orElse(null);
        return resumed(session, id, new Answer(action, content), answer -> pausedOrDone(session, answer));
    }

    // ---- resume (browser) ------------------------------------------------------------------------

    /**
     * Waits for the user's answer in the web UI (given before or during the wait), then resumes with it; with none
     * in {@code tether.agent.browser-approval-wait} the agent is told again where the user answers.
     */
    private Mono<String> resumeAfterApproval(CodeModeSession session, String id) {
        if (!session.owns(id)) {
            return Mono.just(CodeModeTools.noPausedExecution(id));
        }
        return session.approval(id)
                .timeout(properties.browserApprovalWait(), Mono.empty())
                .flatMap(answer -> session.takePaused(id)
                        ? resumed(session, id, answer, next -> pausedOrDone(session, next))
                        : Mono.just(CodeModeTools.noPausedExecution(id)))
                .defaultIfEmpty(CodeModeTools.approvalRequired(id, session.approvalUrl(id)));
    }

    /** Resumes a pause the session took; content the schema refuses gives the pause back, and says why. */
    private Mono<String> resumed(CodeModeSession session, String id, Answer answer,
            java.util.function.Function<ExecutionAnswer, String> shown) {
        return executions.resume(id, answer.action(), answer.content())
                .map(shown)
                .onErrorResume(ExecutionNotFoundException.class, gone -> Mono.just(CodeModeTools.noPausedExecution(id)))
                .onErrorResume(ResumeContentException.class, refused -> {
                    session.paused(id);
                    return Mono.just(CodeModeTools.error(refused.getMessage()));
                });
    }

    // ---- native ----------------------------------------------------------------------------------

    /** Until the execution completes: each question goes to the client, and its answer resumes the execution. */
    private Mono<ExecutionAnswer> relay(CodeModeSession session, ExecutionAnswer answer) {
        Optional<String> paused = pausedId(answer);
        if (paused.isEmpty()) {
            return Mono.just(answer);
        }
        String id = paused.get();
        Map<String, Object> interaction = interaction(answer);
        // The pause is the relay's until the client's answer resumes it: an agent that leaves meanwhile (cancels the
        // call, disconnects, ends the session) leaves nobody to answer, so the execution ends then, not at its expiry.
        return Mono.usingWhen(Mono.just(id),
                        question -> elicit(session, id, interaction)
                                .flatMap(given -> executions.resume(id, given.action(), given.content())
                                        // content that does not match: the SDK's elicitInput fails, and Executor's relay cancels
                                        .onErrorResume(ResumeContentException.class,
                                                refused -> executions.resume(id, ResumeAction.CANCEL, null))),
                        question -> Mono.empty(),
                        (question, failed) -> executions.abandon(question),
                        executions::abandon)
                .flatMap(next -> relay(session, next));
    }

    /** Executor's {@code makeMcpElicitationHandler}: the question as the client can take it, or cancel. */
    private Mono<Answer> elicit(CodeModeSession session, String executionId, Map<String, Object> interaction) {
        String message = String.valueOf(interaction.get("message"));
        Map<String, Object> params = new LinkedHashMap<>();
        boolean url = "url".equals(interaction.get("kind"));
        if (url && session.urlQuestions()) {
            params.put("mode", "url");
            params.put("message", message);
            params.put("url", interaction.get("url"));
            params.put("elicitationId", executionId);
        }
        else {
            Object schema = interaction.get("requestedSchema");
            params.put("message", url ? message + "\n\nPlease visit this URL:\n" + interaction.get("url")
                    + "\n\nClick accept once you have completed the flow." : message);
            params.put("requestedSchema", url || !(schema instanceof Map<?, ?> fields) || fields.isEmpty() ? NO_FIELDS : schema);
            params.put("mode", "form");
            if (!session.formQuestions()) {
                log.info("MCP session {}: execution {} asks a question and the agent's client takes none; cancelled, as Executor does",
                        session.id(), executionId);
                return Mono.just(new Answer(ResumeAction.CANCEL, null));
            }
        }
        return session.ask(ELICIT, params, this::write)
                .timeout(properties.nativeElicitationTimeout())
                .map(CodeModeProtocol::answerOf)
                .onErrorResume(failed -> {
                    log.info("MCP session {}: the client did not answer the question of execution {} ({}); cancelled",
                            session.id(), executionId, failed.toString());
                    return Mono.just(new Answer(ResumeAction.CANCEL, null));
                });
    }

    private static Answer answerOf(Map<String, Object> result) {
        ResumeAction action = result.get("action") instanceof String text ? ResumeAction.parse(text).orElse(ResumeAction.CANCEL)
                : ResumeAction.CANCEL;
        @SuppressWarnings("unchecked")
        Map<String, Object> content = result.get("content") instanceof Map<?, ?> map ? (Map<String, Object>) map : null;
        return new Answer(action, content);
    }

    // ---- JSON ------------------------------------------------------------------------------------

    private Optional<String> pausedId(ExecutionAnswer answer) {
        if (!"paused".equals(answer.status())) {
            return Optional.empty();
        }
        return Optional.ofNullable(parseObject(answer.structured()).get("executionId")).map(String::valueOf);
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> interaction(ExecutionAnswer answer) {
        Object interaction = parseObject(answer.structured()).get("interaction");
        return interaction instanceof Map<?, ?> map ? (Map<String, Object>) map : Map.of();
    }

    private Map<String, Object> parseObject(String text) {
        try {
            return json.readValue(text, OBJECT);
        } catch (IOException | RuntimeException unreadable) {
            return Map.of();
        }
    }

    private @Nullable Object parse(String text) {
        try {
            return json.readValue(text, ANY);
        } catch (IOException unreadable) {
            throw new IllegalArgumentException(unreadable);
        }
    }

    private Map<String, Object> params(@Nullable Object params) {
        if (params == null) {
            return Map.of();
        }
        try {
            return json.convertValue(params, OBJECT);
        } catch (RuntimeException otherShape) {
            return Map.of();
        }
    }

    /** Executor's opaque answer to a failure of Tether's own; the cause goes to the log under the same id. */
    private static String internalError(String tool, Throwable failed) {
        String correlationId = String.format("%08x", ThreadLocalRandom.current().nextInt());
        log.error("MCP {} failed, correlation_id={}", tool, correlationId, failed);
        return CodeModeTools.internalError(correlationId);
    }

    /** Whether {@code text} is JSON at all, for the SDK's two parse errors. */
    boolean json(@Nullable String text) {
        try {
            json.readValue(text == null ? "" : text, ANY);
            return text != null;
        } catch (IOException | RuntimeException unreadable) {
            return false;
        }
    }

    String write(Object value) {
        try {
            return json.writeValueAsString(value);
        } catch (IOException unwritable) {
            throw new IllegalStateException("cannot write JSON", unwritable);
        }
    }

    String response(Object id, String resultJson) {
        return "{\"result\":" + resultJson + ",\"jsonrpc\":\"2.0\",\"id\":" + write(id) + "}";
    }

    String error(@Nullable Object id, int code, String message) {
        // Key order as the SDK writes them: an answer to a request names its id first, the transport's refusals last.
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("jsonrpc", "2.0");
        if (id != null) {
            error.put("id", id);
        }
        Map<String, Object> what = new LinkedHashMap<>();
        what.put("code", code);
        what.put("message", message);
        error.put("error", what);
        if (id == null) {
            error.put("id", null);
        }
        return write(error);
    }

    /** The client's answer to a request Tether sent it, for the session that waits on it. */
    void answered(CodeModeSession session, McpSchema.JSONRPCResponse response) {
        Map<String, Object> result = response.result() == null ? null : params(response.result());
        session.answered(response.id(), result, response.error() == null ? null : response.error().message());
    }

    static List<String> versions() {
        return AgentProtocol.PROTOCOL_VERSIONS;
    }
}
