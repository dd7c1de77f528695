package dev.tether.agent.codemode;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;

import dev.tether.agent.codemode.CodeModeSession.Answer;
import dev.tether.execution.ResumeAction;
import dev.tether.identity.Principal;
import dev.tether.identity.Principals;

/**
 * {@code POST /api/mcp-sessions/{sessionId}/executions/{executionId}/resume}: the web UI's approval page answers a
 * paused execution of an {@code elicitation_mode=browser} session ({@code apps/local/src/mcp.ts}). The answer waits
 * for, or wakes, the agent's {@code resume}, which runs the execution on. Executor's answers; one rule more: the
 * execution must be one the session paused and has not resumed (else Executor's {@code ExecutionNotFoundError}),
 * so that no answer is kept for what will never take it.
 */
@RestController
final class McpSessionApprovals {

    private static final Map<ResumeAction, String[]> SAID = Map.of(
            ResumeAction.ACCEPT, new String[] { "I've approved it", "approved" },
            ResumeAction.DECLINE, new String[] { "I've denied it", "denied" },
            ResumeAction.CANCEL, new String[] { "I've canceled it", "canceled" });

    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();
    private static final TypeRef<Object> ANY = new TypeRef<>() {
    };

    private final CodeModeSessions sessions;

    McpSessionApprovals(CodeModeSessions sessions) {
        this.sessions = sessions;
    }

    @PostMapping("/api/mcp-sessions/{sessionId}/executions/{executionId}/resume")
    ResponseEntity<Map<String, Object>> approve(@PathVariable String sessionId, @PathVariable String executionId,
            @RequestBody(required = false) @Nullable String body, ServerWebExchange exchange) {
        // Only the user whose agent paused it: another user's browser finds no such session.
        String subject = exchange.getAttributeOrDefault(Principals.ATTRIBUTE, Principal.DAEMON).subject();
        CodeModeSession session = sessions.find(sessionId, subject).orElse(null);
        if (session == null) {
            return json(HttpStatus.NOT_FOUND, Map.of("error", "MCP session not found"));
        }
        Answer answer = answer(parse(body));
        if (answer == null) {
            return json(HttpStatus.BAD_REQUEST, Map.of("error", "Invalid approval response"));
        }
        if (!session.owns(executionId)) {
            Map<String, Object> missing = new LinkedHashMap<>();
            missing.put("_tag", "ExecutionNotFoundError");
            missing.put("executionId", executionId);
            return json(HttpStatus.NOT_FOUND, missing);
        }
        session.approved(executionId, answer);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("status", "completed");
        result.put("text", Objects.requireNonNull(SAID.get(answer.action()))[0]);
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("status", Objects.requireNonNull(SAID.get(answer.action()))[1]);
        structured.put("executionId", executionId);
        result.put("structured", structured);
        result.put("isError", false);
        return json(HttpStatus.OK, result);
    }

    /** Executor's payload: {@code {action: accept|decline|cancel, content?: object}}; anything else is none. */
    @SuppressWarnings("unchecked")
    private static @Nullable Answer answer(@Nullable Object body) {
        if (!(body instanceof Map<?, ?> payload) || !(payload.get("action") instanceof String action)) {
            return null;
        }
        ResumeAction chosen = ResumeAction.parse(action).orElse(null);
        Object content = payload.get("content");
        if (chosen == null || payload.containsKey("content") && !(content instanceof Map<?, ?>)) {
            return null;
        }
        return new Answer(chosen, (Map<String, Object>) content);
    }

    private static @Nullable Object parse(@Nullable String body) {
        try {
            return body == null ? null : JSON.readValue(body, ANY);
        } catch (IOException | RuntimeException unreadable) {
            return null;
        }
    }

    private static ResponseEntity<Map<String, Object>> json(HttpStatus status, Map<String, Object> body) {
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON).body(body);
    }
}
