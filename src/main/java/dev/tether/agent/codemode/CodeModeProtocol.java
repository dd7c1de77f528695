package dev.tether.agent.codemode;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.ErrorCodes;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.agent.AgentProperties;
import dev.tether.agent.AgentProtocol;
import dev.tether.agent.codemode.CodeModeJson.Paused;
import dev.tether.agent.codemode.CodeModeSession.Answer;
import dev.tether.agent.codemode.CodeModeTools.Checked;
import dev.tether.agent.codemode.CodeModeTools.ResumeArguments;
import dev.tether.execution.ExecutionAnswer;
import dev.tether.execution.ExecutionNotFoundException;
import dev.tether.execution.Executions;
import dev.tether.execution.ResumeAction;
import dev.tether.execution.ResumeContentException;
import dev.tether.identity.NotPermittedException;

/**
 * Executor's {@code /mcp} as its agents speak it ({@code packages/hosts/mcp/src/tool-server.ts}): {@code execute}
 * runs code on Tether's {@link Executions}, and a paused execution's question goes where the session's
 * {@link ElicitationMode} sends it. A session resumes the executions it paused; one whose session is gone (a restart,
 * its replica's death: the execution survives in the store, the session does not) any session that has its id. Model: the paused answer goes to the agent, whose {@code resume} answers it.
 * Browser: the agent gets the web UI's approval URL, and its {@code resume} waits for the user's answer there.
 * Native: the question goes to the agent's client ({@link NativeElicitationRelay}). Every answer is JSON text of one
 * JSON-RPC response ({@link CodeModeJson}).
 */
@Component
final class CodeModeProtocol {

    private static final Logger log = LoggerFactory.getLogger(CodeModeProtocol.class);

    private final Executions executions;
    private final ExecuteDescription description;
    private final NativeElicitationRelay relay;
    private final AgentProperties properties;

    CodeModeProtocol(Executions executions, ExecuteDescription description, NativeElicitationRelay relay, AgentProperties properties) {
        this.executions = executions;
        this.description = description;
        this.relay = relay;
        this.properties = properties;
    }

    /** Executor's answer to {@code initialize}: its server name and version, tools that may change. */
    String initialize(JSONRPCRequest request, String version) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("protocolVersion", version);
        result.put("capabilities", Map.of("tools", Map.of("listChanged", true)));
        result.put("serverInfo", Map.of("name", "executor", "version", "1.0.0"));
        return CodeModeJson.response(request.id(), CodeModeJson.write(result));
    }

    /** The answer to one request of {@code session}; empty when the agent cancelled it, for then none is owed. */
    Mono<String> answer(CodeModeSession session, JSONRPCRequest request) {
        return switch (request.method()) {
            case McpSchema.METHOD_PING -> Mono.just(CodeModeJson.response(request.id(), "{}"));
            case McpSchema.METHOD_TOOLS_LIST -> description.describe().map(text -> CodeModeJson.response(request.id(),
                    CodeModeJson.write(Map.of("tools", CodeModeTools.list(session.mode(), text)))));
            case McpSchema.METHOD_TOOLS_CALL -> call(session, request);
            default -> Mono.just(CodeModeJson.error(request.id(), ErrorCodes.METHOD_NOT_FOUND, "Method not found"));
        };
    }

    private Mono<String> call(CodeModeSession session, JSONRPCRequest request) {
        Map<String, Object> params = CodeModeJson.params(request.params());
        Object name = params.get("name");
        if (!(name instanceof String tool)) {
            return Mono.just(CodeModeJson.error(request.id(), ErrorCodes.INVALID_PARAMS, "tools/call needs params {name, arguments?}"));
        }
        Object arguments = params.get("arguments");
        Mono<String> result;
        if (!CodeModeTools.offered(session.mode(), tool)) {
            result = Mono.just(CodeModeTools.protocolError("Tool " + tool + " not found"));
        }
        else if (CodeModeTools.EXECUTE.equals(tool)) {
            Checked<String> code = CodeModeTools.code(arguments);
            String refusal = code.refusal();
            result = refusal != null ? Mono.just(refusal) : execute(session, Objects.requireNonNull(code.value()));
        }
        else {
            Checked<ResumeArguments> resume = CodeModeTools.resume(session.mode(), arguments);
            String refusal = resume.refusal();
            ResumeArguments asked = resume.value();
            result = refusal != null ? Mono.just(refusal)
                    : session.mode() == ElicitationMode.BROWSER ? resumeAfterApproval(session, Objects.requireNonNull(asked).executionId())
                    : resume(session, Objects.requireNonNull(asked));
        }
        return Mono.usingWhen(Mono.fromSupplier(() -> session.started(request.id())),
                cancel -> result.onErrorResume(NotPermittedException.class, refused -> Mono.just(
                        CodeModeTools.refused(Objects.requireNonNull(refused.getMessage()))))
                        .onErrorResume(failed -> Mono.just(internalError(tool, failed)))
                        .map(text -> CodeModeJson.response(request.id(), text))
                        .takeUntilOther(cancel.asMono()),
                cancel -> Mono.fromRunnable(() -> session.finished(request.id(), cancel)));
    }

    // ---- execute ---------------------------------------------------------------------------------

    private Mono<String> execute(CodeModeSession session, String code) {
        if (session.mode() == ElicitationMode.NATIVE) {
            return executions.execute(code, session.id()).flatMap(answer -> relay.relay(session, answer)).map(CodeModeTools::result);
        }
        return executions.execute(code, session.id()).map(answer -> pausedOrDone(session, answer));
    }

    /** A pause becomes the session's to resume; the agent sees it as its mode has it. */
    private String pausedOrDone(CodeModeSession session, ExecutionAnswer answer) {
        Optional<String> paused = CodeModeJson.paused(answer).map(Paused::executionId);
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
        if (!session.takePaused(id) && executions.heldHere(id)) {
            return Mono.just(CodeModeTools.noPausedExecution(id));
        }
        ResumeAction action = ResumeAction.parse(arguments.action()).orElseThrow();
        Map<String, Object> content = CodeModeTools.content(arguments.content(), CodeModeJson::parse).orElse(null);
        return resumed(session, id, new Answer(action, content), answer -> pausedOrDone(session, answer));
    }

    // ---- resume (browser) ------------------------------------------------------------------------

    /**
     * Waits for the user's answer in the web UI (given before or during the wait), then resumes with it; with none
     * in {@code tether.agent.browser-approval-wait} the agent is told again where the user answers.
     */
    private Mono<String> resumeAfterApproval(CodeModeSession session, String id) {
        if (!session.owns(id)) {
            return executions.heldHere(id) ? Mono.just(CodeModeTools.noPausedExecution(id)) : adopt(session, id);
        }
        return session.approval(id)
                .timeout(properties.browserApprovalWait(), Mono.empty())
                .flatMap(answer -> session.takePaused(id)
                        ? resumed(session, id, answer, next -> pausedOrDone(session, next))
                        : Mono.just(CodeModeTools.noPausedExecution(id)))
                .defaultIfEmpty(CodeModeTools.approvalRequired(id, session.approvalUrl(id)));
    }

    /**
     * A paused execution this replica does not hold, whose session was lost with a restart or with its replica: the
     * session takes it on, and the user answers it on the session's own approval page, which the agent is given now.
     */
    private Mono<String> adopt(CodeModeSession session, String id) {
        return executions.paused(id)
                .map(pause -> {
                    session.paused(id);
                    return CodeModeTools.approvalRequired(id, session.approvalUrl(id));
                })
                .onErrorResume(ExecutionNotFoundException.class, gone -> Mono.just(CodeModeTools.noPausedExecution(id)));
    }

    /** Resumes a pause the session took; content the schema refuses gives the pause back, and says why. */
    private Mono<String> resumed(CodeModeSession session, String id, Answer answer,
            Function<ExecutionAnswer, String> shown) {
        return executions.resume(id, answer.action(), answer.content())
                .map(shown)
                .onErrorResume(ExecutionNotFoundException.class, gone -> Mono.just(CodeModeTools.noPausedExecution(id)))
                .onErrorResume(ResumeContentException.class, refused -> {
                    session.paused(id);
                    return Mono.just(CodeModeTools.error(Objects.requireNonNull(refused.getMessage())));
                });
    }

    /** Executor's opaque answer to a failure of Tether's own; the cause goes to the log under the same id. */
    private static String internalError(String tool, Throwable failed) {
        String correlationId = String.format("%08x", ThreadLocalRandom.current().nextInt());
        log.error("MCP {} failed, correlation_id={}", tool, correlationId, failed);
        return CodeModeTools.internalError(correlationId);
    }

    /** The client's answer to a request Tether sent it, for the session that waits on it. */
    void answered(CodeModeSession session, McpSchema.JSONRPCResponse response) {
        Map<String, Object> result = response.result() == null ? null : CodeModeJson.params(response.result());
        session.answered(response.id(), result, response.error() == null ? null : response.error().message());
    }

    static List<String> versions() {
        return AgentProtocol.PROTOCOL_VERSIONS;
    }
}
