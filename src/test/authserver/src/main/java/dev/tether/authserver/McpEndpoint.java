package dev.tether.authserver;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.core.annotation.AuthenticationPrincipal;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A remote MCP server over streamable HTTP, stateless and answering in JSON: {@code initialize}, {@code tools/list}
 * and one tool, {@code whoami}, which tells who the token it was called with was issued to. Only reachable with a
 * token the authorization server beside it issued ({@link AuthServerApplication#mcpServer}).
 */
@RestController
public class McpEndpoint {

    @PostMapping(path = "/mcp", produces = "application/json")
    ResponseEntity<Map<String, Object>> post(@RequestBody Map<String, Object> message, @AuthenticationPrincipal Jwt token) {
        Object id = message.get("id");
        String method = String.valueOf(message.get("method"));
        if (id == null) {
            return ResponseEntity.status(HttpStatus.ACCEPTED).build(); // a notification
        }
        Object result = switch (method) {
            case "initialize" -> Map.of("protocolVersion", requestedVersion(message), "capabilities", Map.of("tools", Map.of()),
                    "serverInfo", Map.of("name", "spring-authorization-server-protected", "version", "1"));
            case "tools/list" -> Map.of("tools", List.of(Map.of("name", "whoami",
                    "description", "Tells whom the caller's access token was issued to",
                    "inputSchema", Map.of("type", "object", "properties", Map.of()))));
            case "tools/call" -> Map.of("content", List.of(Map.of("type", "text",
                    "text", "token of " + token.getSubject() + ", id " + token.getId())), "isError", false);
            case "ping" -> Map.of();
            default -> null;
        };
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("jsonrpc", "2.0");
        answer.put("id", id);
        if (result == null) {
            answer.put("error", Map.of("code", -32601, "message", "method not found: " + method));
        }
        else {
            answer.put("result", result);
        }
        return ResponseEntity.ok(answer);
    }

    /** No stream of server-sent messages: this server never sends any. */
    @GetMapping("/mcp")
    ResponseEntity<Void> stream() {
        return ResponseEntity.status(HttpStatus.METHOD_NOT_ALLOWED).build();
    }

    private static Object requestedVersion(Map<String, Object> message) {
        return message.get("params") instanceof Map<?, ?> params && params.get("protocolVersion") != null
                ? params.get("protocolVersion") : "2025-06-18";
    }
}
