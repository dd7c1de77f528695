package dev.tether.execution;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.modelcontextprotocol.spec.McpSchema.ElicitFormRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitUrlRequest;
import org.jspecify.annotations.Nullable;

import dev.tether.policy.Decision;

/**
 * Executor's answers to an execution, written by the host from what the code left: {@code formatExecuteResult} for
 * one that ended, the {@code waiting_for_interaction} form for one that pauses, the question an approval asks.
 * Every string in them is quoted here ({@link JsJson}); the result is JSON Tether wrote ({@link ResultClone}).
 */
final class ExecutionAnswers {

    /** Executor's preview bounds: the answer text and the arguments shown in an approval. */
    private static final int MAX_TEXT_CHARS = 30_000;
    private static final int MAX_ARGUMENT_PREVIEW_CHARS = 4_000;
    private static final String REQUESTED_SCHEMA = "{\"type\":\"object\",\"properties\":{}}";

    private final long maxOutputBytes;

    ExecutionAnswers(long maxOutputBytes) {
        this.maxOutputBytes = maxOutputBytes;
    }

    /** Executor's {@code formatExecuteResult}. */
    ExecutionAnswer completed(List<String> logs, Settled settled) {
        String logPart = logs.isEmpty() ? "" : "\n\nLogs:\n" + String.join("\n", logs);
        if (!settled.ok()) {
            String error = Objects.requireNonNull(settled.error());
            return ExecutionAnswer.completed(truncate("Error: " + error + logPart),
                    "{\"status\":\"error\",\"error\":" + JsJson.quote(error) + ",\"logs\":" + JsJson.array(logs) + "}", true);
        }
        if (Objects.requireNonNull(settled.resultJson()).getBytes(StandardCharsets.UTF_8).length > maxOutputBytes) {
            return completed(logs, Settled.failed("Error: the result is larger than the output limit of " + maxOutputBytes + " bytes"));
        }
        String structured = "{\"status\":\"completed\",\"result\":" + settled.resultJson() + ",\"logs\":" + JsJson.array(logs) + "}";
        String result = settled.resultText() == null || settled.resultText().isEmpty() ? "(no result)" : truncate(settled.resultText());
        return ExecutionAnswer.completed(result + logPart, structured, false);
    }

    /** What the user is asked for a call that needs approval: as Executor, the tool's own approval description when it has one. */
    static String question(PendingCall call, Decision decision, @Nullable String approvalDescription) {
        String ask = approvalDescription != null && !approvalDescription.isEmpty() ? approvalDescription
                : decision.pattern() == null ? "Approve " + call.address() + "?"
                : "Approve " + call.address() + "? (matched policy: " + decision.pattern() + ")";
        String preview = call.argsPreview().length() > MAX_ARGUMENT_PREVIEW_CHARS
                ? call.argsPreview().substring(0, MAX_ARGUMENT_PREVIEW_CHARS) + "..." : call.argsPreview();
        return ask + "\n\nArguments:\n" + preview;
    }

    /**
     * Executor's paused answer for {@code call}, under pause id {@code id}. The call's arguments are JSON the
     * sandbox's own {@code JSON.stringify} wrote (taken before the code ran), so they are JSON whatever the code did.
     */
    static ExecutionAnswer.Pause pause(String id, PendingCall call) {
        String instructions = "Ask the user for values matching requestedSchema. Then call the resume tool with executionId \""
                + id + "\", action \"accept\", and content matching requestedSchema. If the user declines, call resume with "
                + "action \"decline\" or \"cancel\".";
        String text = String.join("\n",
                "Execution paused: " + call.approval(),
                "\nAsk the user for a response matching the requested schema, then call the resume tool.",
                "\nRequested schema:\n{\n  \"type\": \"object\",\n  \"properties\": {}\n}",
                "\nexecutionId: " + id,
                "\ninstructions: " + instructions);
        String structured = "{\"status\":\"waiting_for_interaction\",\"executionId\":" + JsJson.quote(id)
                + ",\"interaction\":{\"kind\":\"form\",\"message\":" + JsJson.quote(Objects.requireNonNull(call.approval()))
                + ",\"instructions\":" + JsJson.quote(instructions)
                + ",\"address\":" + JsJson.quote(call.address())
                + (call.argsJson() == null ? "" : ",\"args\":" + call.argsJson())
                + ",\"requestedSchema\":" + REQUESTED_SCHEMA + "}}";
        return new ExecutionAnswer.Pause(text, structured);
    }

    /** Executor 1.5.9's {@code formatPausedExecution} of a server's question, under pause id {@code id}: a form, or a URL to open. */
    static ExecutionAnswer.Pause pause(String id, PendingCall call, Elicitation question) {
        String message = question.request().message();
        Map<String, Object> schema = question.request() instanceof ElicitFormRequest form && form.requestedSchema() != null
                ? form.requestedSchema() : null;
        String url = question.request() instanceof ElicitUrlRequest link ? link.url() : null;
        boolean hasSchema = schema != null && !schema.isEmpty();
        String instructions = url != null
                ? "The user needs to open this URL in a browser and complete the flow. After the user finishes, call the resume tool with executionId \""
                        + id + "\" and action \"accept\"."
                : hasSchema
                        ? "Ask the user for values matching requestedSchema. Then call the resume tool with executionId \"" + id
                                + "\", action \"accept\", and content matching requestedSchema. If the user declines, call resume with "
                                + "action \"decline\" or \"cancel\"."
                        : "This is a model-side confirmation gate; there is no browser form to open. Ask the user whether to approve "
                                + "the paused tool call. If the user approves, call the resume tool with executionId \"" + id
                                + "\" and action \"accept\". If the user declines, call resume with action \"decline\" or \"cancel\".";
        List<String> lines = new ArrayList<>();
        lines.add("Execution paused: " + message);
        if (url != null) {
            lines.add("\nOpen this URL in a browser:\n" + url);
            lines.add("\nAfter the browser flow, call the resume tool with action \"accept\".");
        }
        else if (hasSchema && schema != null) {
            lines.add("\nAsk the user for a response matching the requested schema, then call the resume tool.");
            lines.add("\nRequested schema:\n" + JsJson.write(schema, "  ", ""));
        }
        else {
            lines.add("\nThis is a model-side confirmation gate; no browser form is waiting. Ask the user whether to approve, "
                    + "then call the resume tool with action \"accept\", \"decline\", or \"cancel\".");
        }
        lines.add("\nexecutionId: " + id);
        lines.add("\ninstructions: " + instructions);
        String text = String.join("\n", lines);
        String structured = "{\"status\":\"waiting_for_interaction\",\"executionId\":" + JsJson.quote(id)
                + ",\"interaction\":{\"kind\":" + (url != null ? "\"url\"" : "\"form\"")
                + ",\"message\":" + JsJson.quote(message)
                + ",\"instructions\":" + JsJson.quote(instructions)
                + ",\"address\":" + JsJson.quote(call.address())
                + (call.argsJson() == null ? "" : ",\"args\":" + call.argsJson())
                + (url != null ? ",\"url\":" + JsJson.quote(url) : "")
                + (url == null ? ",\"requestedSchema\":" + JsJson.write(schema == null ? Map.of() : schema, "", "") : "")
                + "}}";
        return new ExecutionAnswer.Pause(text, structured);
    }

    private static String truncate(String text) {
        return text.length() > MAX_TEXT_CHARS
                ? text.substring(0, MAX_TEXT_CHARS) + "\n... [truncated " + (text.length() - MAX_TEXT_CHARS) + " chars]" : text;
    }
}
