package dev.tether.agent.codemode;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.agent.codemode.CodeModeTools.Checked;
import dev.tether.agent.codemode.CodeModeTools.ResumeArguments;
import dev.tether.execution.ExecutionAnswer;

/**
 * Executor's code mode as another transport offers it: the two tools, their arguments checked as Executor checks them,
 * and their answers as MCP results (JSON text of a {@code CallToolResult}). The stateless era serves these on
 * {@code /mcp} beside the sessions of this package, so that both eras list, check and answer alike.
 */
@Component
public final class CodeModeOffer {

    private final ExecuteDescription description;

    CodeModeOffer(ExecuteDescription description) {
        this.description = description;
    }

    /** {@code execute}, and {@code resume} as the model answers it when {@code modelResumes} (a client that takes no questions). */
    public Mono<List<Map<String, Object>>> tools(boolean modelResumes) {
        return description.describe().map(text -> CodeModeTools.list(modelResumes ? ElicitationMode.MODEL : ElicitationMode.NATIVE, text));
    }

    /** {@code execute}'s code, or the result that refuses the arguments. */
    public static Argument<String> code(@Nullable Object arguments) {
        Checked<String> checked = CodeModeTools.code(arguments);
        return new Argument<>(checked.value(), checked.refusal());
    }

    /** {@code resume}'s arguments as the model gives them, or the result that refuses them. */
    public static Argument<Resume> resume(@Nullable Object arguments) {
        Checked<ResumeArguments> checked = CodeModeTools.resume(ElicitationMode.MODEL, arguments);
        ResumeArguments given = checked.value();
        return new Argument<>(given == null ? null : new Resume(given.executionId(), given.action(),
                CodeModeTools.content(given.content(), CodeModeJson::parse).orElse(null)), checked.refusal());
    }

    /** Executor's result of an execution that completed, or of a pause told to the model. */
    public static String result(ExecutionAnswer answer) {
        return CodeModeTools.result(answer);
    }

    /** Executor's answer to a resume of an execution that is not paused. */
    public static String noPausedExecution(String executionId) {
        return CodeModeTools.noPausedExecution(executionId);
    }

    /** An answer of the tool's own, e.g. content that does not match the requested schema. */
    public static String error(String text) {
        return CodeModeTools.error(text);
    }

    /** Executor's opaque answer to a failure of Tether's own, whose cause goes to the log under the same id. */
    public static String internalError(String correlationId) {
        return CodeModeTools.internalError(correlationId);
    }

    /** A checked argument: its value, or the result (JSON text) that refuses it. */
    public record Argument<T>(@Nullable T value, @Nullable String refusal) {
    }

    /** What {@code resume} was asked. */
    public record Resume(String executionId, String action, @Nullable Map<String, Object> content) {
    }
}
