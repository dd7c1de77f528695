package dev.tether.agent.codemode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import dev.tether.execution.ExecutionAnswer;
import dev.tether.execution.JsJson;

/**
 * Executor's two tools as its {@code /mcp} lists them ({@code packages/hosts/mcp/src/tool-server.ts}): {@code execute}
 * and, unless the agent's client answers questions itself, {@code resume}, whose arguments depend on who answers
 * them. Their arguments are checked as Executor's zod schemas check them, with zod's words, and their answers are
 * Executor's MCP results, written here as JSON text so that the sandbox's own JSON ({@code structuredContent}) goes
 * out as the sandbox wrote it.
 */
final class CodeModeTools {

    static final String EXECUTE = "execute";
    static final String RESUME = "resume";
    private static final String DRAFT_07 = "http://json-schema.org/draft-07/schema#";
    private static final List<String> ACTIONS = List.of("accept", "decline", "cancel");
    static final String BROWSER_RETURN_PROMPT = "Return text to the user telling them to approve the action at this approvalUrl. "
            + "Only after you have prompted the user, call the `resume` tool with this executionId; `resume` will wait for the "
            + "user's browser decision.";

    private CodeModeTools() {
    }

    /** The tools an agent of {@code mode} sees, described by {@code executeDescription}. */
    static List<Map<String, Object>> list(ElicitationMode mode, String executeDescription) {
        List<Map<String, Object>> tools = new ArrayList<>();
        tools.add(tool(EXECUTE, executeDescription, schema(Map.of("code", map("type", "string", "minLength", 1)), List.of("code"))));
        if (mode == ElicitationMode.MODEL) {
            Map<String, Object> properties = new LinkedHashMap<>();
            properties.put("executionId", map("type", "string", "description", "The execution ID from the paused result"));
            properties.put("action", map("type", "string", "enum", ACTIONS, "description", "How to respond to the interaction"));
            properties.put("content", map("default", "{}", "type", "string",
                    "description", "Optional JSON-encoded response content for form elicitations"));
            tools.add(tool(RESUME, "Resume a paused execution using the executionId returned by execute.\n"
                    + "This connection explicitly allows model-side resume via elicitation_mode=model.",
                    schema(properties, List.of("executionId", "action"))));
        }
        else if (mode == ElicitationMode.BROWSER) {
            tools.add(tool(RESUME, "Request user approval to resume a paused execution.\n"
                    + "Call this with the executionId returned by execute. If the user has not approved in the browser yet, tell them "
                    + "to open the returned approval URL. If they have approved, this returns the resumed execution result.\n"
                    + "This connection does not allow the model to choose accept, decline, cancel, or content.",
                    schema(Map.of("executionId", map("type", "string", "description", "The execution ID from the paused result")),
                            List.of("executionId"))));
        }
        return tools;
    }

    /** Whether {@code name} is a tool an agent of {@code mode} may call. */
    static boolean offered(ElicitationMode mode, String name) {
        return EXECUTE.equals(name) || RESUME.equals(name) && mode != ElicitationMode.NATIVE;
    }

    // ---- arguments, as zod reads them ------------------------------------------------------------

    /** {@code execute}'s code, trimmed as {@code z.string().trim().min(1)} leaves it; or the issues zod would name. */
    static Checked<String> code(@Nullable Object arguments) {
        if (!(arguments instanceof Map<?, ?> args)) {
            return Checked.refused(EXECUTE, List.of(typeIssue("object", arguments, List.of())));
        }
        Object code = args.get("code");
        if (!(code instanceof String text)) {
            return Checked.refused(EXECUTE, List.of(typeIssue("string", code, List.of("code"))));
        }
        String trimmed = text.strip();
        if (trimmed.isEmpty()) {
            Map<String, Object> issue = new LinkedHashMap<>();
            issue.put("origin", "string");
            issue.put("code", "too_small");
            issue.put("minimum", 1);
            issue.put("inclusive", true);
            issue.put("path", List.of("code"));
            issue.put("message", "Too small: expected string to have >=1 characters");
            return Checked.refused(EXECUTE, List.of(issue));
        }
        return Checked.ok(trimmed);
    }

    /** {@code resume}'s arguments for {@code mode}: the action and content are the model's only in model mode. */
    static Checked<ResumeArguments> resume(ElicitationMode mode, @Nullable Object arguments) {
        if (!(arguments instanceof Map<?, ?> args)) {
            return Checked.refused(RESUME, List.of(typeIssue("object", arguments, List.of())));
        }
        List<Map<String, Object>> issues = new ArrayList<>();
        Object executionId = args.get("executionId");
        if (!(executionId instanceof String)) {
            issues.add(typeIssue("string", executionId, List.of("executionId")));
        }
        if (mode == ElicitationMode.BROWSER) {
            return issues.isEmpty() ? Checked.ok(new ResumeArguments((String) Objects.requireNonNull(executionId), "accept", null))
                    : Checked.refused(RESUME, issues);
        }
        Object action = args.get("action");
        if (!(action instanceof String chosen) || !ACTIONS.contains(chosen)) {
            Map<String, Object> issue = new LinkedHashMap<>();
            issue.put("code", "invalid_value");
            issue.put("values", ACTIONS);
            issue.put("path", List.of("action"));
            issue.put("message", "Invalid option: expected one of \"accept\"|\"decline\"|\"cancel\"");
            issues.add(issue);
        }
        Object content = args.containsKey("content") ? args.get("content") : "{}";
        if (!(content instanceof String)) {
            issues.add(typeIssue("string", content, List.of("content")));
        }
        return issues.isEmpty() ? Checked.ok(new ResumeArguments((String) Objects.requireNonNull(executionId),
                (String) Objects.requireNonNull(action), (String) content))
                : Checked.refused(RESUME, issues);
    }

    /** zod's {@code invalid_type}, naming what it got as zod names it. */
    private static Map<String, Object> typeIssue(String expected, @Nullable Object got, List<String> path) {
        Map<String, Object> issue = new LinkedHashMap<>();
        issue.put("expected", expected);
        issue.put("code", "invalid_type");
        issue.put("path", path);
        issue.put("message", "Invalid input: expected " + expected + ", received " + jsType(got));
        return issue;
    }

    private static String jsType(@Nullable Object value) {
        if (value == null) {
            return "undefined"; // an absent key and an explicit null both arrive as null; absent is the common case
        }
        if (value instanceof String) {
            return "string";
        }
        if (value instanceof Number) {
            return "number";
        }
        if (value instanceof Boolean) {
            return "boolean";
        }
        if (value instanceof List<?>) {
            return "array";
        }
        return "object";
    }

    /**
     * Executor's JSON-encoded {@code content}: {@code "{}"} and anything that is not a JSON object stand for none.
     */
    static Optional<Map<String, Object>> content(@Nullable String raw, java.util.function.Function<String, @Nullable Object> parse) {
        if (raw == null || raw.equals("{}")) {
            return Optional.empty();
        }
        Object parsed;
        try {
            parsed = parse.apply(raw);
        } catch (RuntimeException unreadable) {
            return Optional.empty();
        }
        if (!(parsed instanceof Map<?, ?> map)) {
            return Optional.empty();
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> object = (Map<String, Object>) map;
        return Optional.of(object);
    }

    // ---- answers ---------------------------------------------------------------------------------

    /** Executor's {@code toMcpResult} and {@code toMcpPausedResult}: the answer's text, its structured JSON. */
    static String result(ExecutionAnswer answer) {
        return result(answer.text(), answer.structured(), Boolean.TRUE.equals(answer.isError()));
    }

    /** Executor's answer to a resume of an execution that is not paused (or not this agent's). */
    static String noPausedExecution(String executionId) {
        return result("No paused execution: " + executionId, null, true);
    }

    /** An answer of the tool's own, e.g. content that does not match the requested schema. */
    static String error(String text) {
        return result(text, null, true);
    }

    /** Executor's answer to arguments its schema refuses, and to a tool it does not have. */
    static String protocolError(String message) {
        return result("MCP error -32602: " + message, null, true);
    }

    /** A caller whose role does not allow the tool (a viewer runs no code): a tool error that says so, not an internal one. */
    static String refused(String message) {
        return result("Error: " + message, "{\"status\":\"error\",\"error\":" + JsJson.quote(message) + "}", true);
    }

    /** Executor's opaque answer to a failure of its own, whose cause goes to the log under the same id. */
    static String internalError(String correlationId) {
        String text = "Internal tool error [" + correlationId + "]";
        return result("Error: " + text, "{\"status\":\"error\",\"error\":" + JsJson.quote(text) + "}", true);
    }

    /** {@code elicitation_mode=browser}: the user answers at {@code approvalUrl}, the agent then calls resume. */
    static String approvalRequired(String executionId, String approvalUrl) {
        String text = String.join("\n", "User approval required.", "",
                "Tell the user to open this URL while signed in and approve or decline the paused interaction:", approvalUrl, "",
                "Required next steps for this agent:", BROWSER_RETURN_PROMPT);
        String structured = "{\"status\":\"user_approval_required\",\"executionId\":" + JsJson.quote(executionId)
                + ",\"approvalUrl\":" + JsJson.quote(approvalUrl) + ",\"resumePrompt\":" + JsJson.quote(BROWSER_RETURN_PROMPT) + "}";
        return result(text, structured, false);
    }

    private static String result(String text, @Nullable String structured, boolean isError) {
        return "{\"content\":[{\"type\":\"text\",\"text\":" + JsJson.quote(text) + "}]"
                + (structured == null ? "" : ",\"structuredContent\":" + structured)
                + (isError ? ",\"isError\":true" : "") + "}";
    }

    private static Map<String, Object> tool(String name, String description, Map<String, Object> inputSchema) {
        return map("name", name, "description", description, "inputSchema", inputSchema, "execution", Map.of("taskSupport", "forbidden"));
    }

    private static Map<String, Object> schema(Map<String, Object> properties, List<String> required) {
        return map("type", "object", "properties", properties, "required", required, "$schema", DRAFT_07);
    }

    /** A map that keeps the order its pairs are given in, as the JSON Executor writes does. */
    private static Map<String, Object> map(Object... pairs) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.put((String) pairs[i], pairs[i + 1]);
        }
        return map;
    }

    /** Arguments zod let through, or the result that refuses them. */
    record Checked<T>(@Nullable T value, @Nullable String refusal) {

        static <T> Checked<T> ok(T value) {
            return new Checked<>(value, null);
        }

        static <T> Checked<T> refused(String tool, List<Map<String, Object>> issues) {
            return new Checked<>(null, protocolError("Input validation error: Invalid arguments for tool " + tool + ": "
                    + JsJson.write(issues, "  ", "")));
        }
    }

    /** What {@code resume} was asked: in browser mode the action is the user's, so it reads {@code accept} here. */
    record ResumeArguments(String executionId, String action, @Nullable String content) {
    }
}
