package dev.tether.api;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.util.DisconnectedClientHelper;
import tools.jackson.core.JacksonException;
import tools.jackson.core.exc.StreamReadException;

import dev.tether.calls.ToolNotFoundException;
import dev.tether.calls.builtin.BuiltinUnavailableException;
import dev.tether.onepassword.OnePasswordException;
import dev.tether.execution.ExecutionNotFoundException;
import dev.tether.graphql.GraphqlExtractionException;
import dev.tether.graphql.GraphqlIntrospectionException;
import dev.tether.http.InvalidTemplateException;
import dev.tether.identity.NotPermittedException;
import dev.tether.mcp.McpServerException;
import dev.tether.oauth.OAuthException;
import dev.tether.oauth.OAuthSessionNotFoundException;
import dev.tether.openapi.OpenApiExtractionException;
import dev.tether.openapi.OpenApiParseException;
import dev.tether.policy.InvalidPolicyException;
import dev.tether.policy.PolicyNotFoundException;
import dev.tether.process.ChildSpawnException;
import dev.tether.replicas.ConnectionHandoverException;
import dev.tether.replicas.LeaseLostException;
import dev.tether.session.SessionLimitException;
import dev.tether.store.ConnectionAlreadyExistsException;
import dev.tether.store.ConnectionNotFoundException;
import dev.tether.store.IntegrationAlreadyExistsException;
import dev.tether.store.IntegrationNotFoundException;
import dev.tether.api.input.InvalidInputException;
import dev.tether.security.StdioNotAllowedException;
import dev.tether.users.InvalidRequestException;
import dev.tether.users.TokenNotFoundException;

/**
 * The one place where failures become HTTP: Executor's JSON errors, tagged with {@code _tag}. A 400 carries the error
 * that Executor 1.5.9's document declares for the route's 400 where it declares one ({@code InvalidConnectionInputError}
 * on {@code POST /api/connections}, {@code McpConnectionError} under {@code /api/mcp}); where it declares none,
 * Tether's own {@code HttpApiDecodeError} names the field at fault.
 */
@RestControllerAdvice
final class ApiErrors {

    private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);

    /**
     * Every failure of a feature package that the API answers as Executor does: its status, its tag and the fields
     * beside the tag, in Executor's order. A new error adds one line here; anything not listed is an internal error.
     */
    private static final List<Answer<?>> ANSWERS = List.of(
            answer(IntegrationNotFoundException.class, HttpStatus.NOT_FOUND, ex -> tagged("IntegrationNotFoundError", "slug", ex.slug())),
            answer(ConnectionNotFoundException.class, HttpStatus.NOT_FOUND, ex -> tagged("ConnectionNotFoundError",
                    "owner", ex.key().owner().wire(), "integration", ex.key().integration(), "name", ex.key().name())),
            answer(IntegrationAlreadyExistsException.class, HttpStatus.CONFLICT, ex -> tagged("IntegrationAlreadyExistsError", "slug", ex.slug())),
            // 1.5.9 declares InvalidConnectionInputError as a 400; its 409 on this route is a different error.
            answer(ConnectionAlreadyExistsException.class, HttpStatus.BAD_REQUEST,
                    ex -> tagged("InvalidConnectionInputError", "message", ex.getMessage())),
            answer(StdioNotAllowedException.class, HttpStatus.FORBIDDEN, ex -> tagged("StdioNotAllowedError", "message", ex.getMessage())),
            // A role that does not allow what was asked: the message names the role and the action, never a row.
            answer(NotPermittedException.class, HttpStatus.FORBIDDEN, ex -> tagged("ForbiddenError", "message", ex.getMessage())),
            answer(TokenNotFoundException.class, HttpStatus.NOT_FOUND, ex -> tagged("TokenNotFoundError", "id", ex.id())),
            answer(InvalidRequestException.class, HttpStatus.BAD_REQUEST, ex -> tagged(InvalidInputException.DECODE, "message", ex.getMessage())),
            answer(PeerOnlyException.class, HttpStatus.FORBIDDEN, ex -> tagged("PeerOnlyError", "message", ex.getMessage())),
            answer(RemoteServerUnreachableException.class, HttpStatus.BAD_REQUEST,
                    ex -> tagged("McpConnectionError", "transport", "remote", "message", ex.getMessage())),
            // Executor's OAuth errors are 400s with their message (and, completing, whether the flow must start over).
            answer(OAuthException.class, HttpStatus.BAD_REQUEST, ex -> ex.restartRequired()
                    .map(restart -> tagged(ex.tag(), "message", ex.getMessage(), "restartRequired", restart))
                    .orElseGet(() -> tagged(ex.tag(), "message", ex.getMessage()))),
            answer(OAuthSessionNotFoundException.class, HttpStatus.NOT_FOUND, ex -> tagged("OAuthSessionNotFoundError", "state", ex.state())),
            answer(ExecutionNotFoundException.class, HttpStatus.NOT_FOUND, ex -> tagged("ExecutionNotFoundError", "executionId", ex.executionId())),
            // 1.5.9 answers an unknown policy with a 500 InternalError; a 404 that names it says more.
            answer(PolicyNotFoundException.class, HttpStatus.NOT_FOUND,
                    ex -> tagged("PolicyNotFoundError", "id", ex.id(), "message", ex.getMessage())),
            answer(InvalidPolicyException.class, HttpStatus.BAD_REQUEST, ex -> tagged(InvalidInputException.DECODE, "message", ex.getMessage())),
            answer(ToolNotFoundException.class, HttpStatus.NOT_FOUND, ex -> tagged("ToolNotFoundError", "address", ex.address())),
            // A built-in whose feature this server lacks: Executor's error for a tool whose plugin is not loaded.
            answer(BuiltinUnavailableException.class, HttpStatus.NOT_IMPLEMENTED,
                    ex -> tagged("PluginNotLoadedError", "address", ex.address(), "pluginId", ex.pluginId())),
            answer(OnePasswordException.class, HttpStatus.BAD_GATEWAY,
                    ex -> tagged("OnePasswordError", "operation", ex.operation(), "message", ex.getMessage())),
            answer(LeaseLostException.class, HttpStatus.SERVICE_UNAVAILABLE,
                    ex -> tagged("ReplicaUnavailableError", "message", ex.getMessage())),
            answer(ConnectionHandoverException.class, HttpStatus.SERVICE_UNAVAILABLE,
                    ex -> tagged("ReplicaHandoverError", "message", ex.getMessage())),
            answer(SessionLimitException.class, HttpStatus.TOO_MANY_REQUESTS,
                    ex -> tagged("SessionLimitError", "limit", ex.limit(), "message", ex.getMessage())),
            answer(McpServerException.class, HttpStatus.BAD_GATEWAY,
                    ex -> tagged("McpConnectionError", "transport", "stdio", "message", ex.getMessage())),
            answer(ChildSpawnException.class, HttpStatus.BAD_GATEWAY,
                    ex -> tagged("McpConnectionError", "transport", "stdio", "message", ex.getMessage())),
            answer(OpenApiParseException.class, HttpStatus.BAD_REQUEST, ex -> tagged("OpenApiParseError", "message", ex.getMessage())),
            answer(OpenApiExtractionException.class, HttpStatus.BAD_REQUEST,
                    ex -> tagged("OpenApiExtractionError", "message", ex.getMessage())),
            answer(GraphqlIntrospectionException.class, HttpStatus.BAD_REQUEST,
                    ex -> tagged("GraphqlIntrospectionError", "message", ex.getMessage())),
            answer(GraphqlExtractionException.class, HttpStatus.BAD_REQUEST,
                    ex -> tagged("GraphqlExtractionError", "message", ex.getMessage())),
            // An authentication template in a shape no source takes: the message names the field at fault.
            answer(InvalidTemplateException.class, HttpStatus.BAD_REQUEST, ex -> tagged(InvalidInputException.DECODE, "message", ex.getMessage())));

    @ExceptionHandler
    ResponseEntity<Map<String, Object>> invalid(InvalidInputException ex, ServerWebExchange exchange) {
        return badRequest(exchange, ex.tag(), ex.getMessage());
    }

    @ExceptionHandler
    ResponseEntity<Map<String, Object>> undecodable(ServerWebInputException ex, ServerWebExchange exchange) {
        String reason = ex.getReason() == null ? "the request could not be read" : ex.getReason();
        Throwable cause = ex.getMostSpecificCause();
        String detail = cause != ex && cause.getMessage() != null ? reason + ": " + problem(cause) : reason;
        return badRequest(exchange, InvalidInputException.DECODE, detail);
    }

    /** A 400 as the route declares it in Executor 1.5.9; an input error of Tether's own where the route declares none. */
    private static ResponseEntity<Map<String, Object>> badRequest(ServerWebExchange exchange, String tag, @Nullable String message) {
        if (!tag.equals(InvalidInputException.DECODE)) {
            return body(HttpStatus.BAD_REQUEST, tag, "message", message);
        }
        String path = exchange.getRequest().getPath().pathWithinApplication().value();
        if (HttpMethod.POST.equals(exchange.getRequest().getMethod()) && path.equals("/api/connections")) {
            return body(HttpStatus.BAD_REQUEST, "InvalidConnectionInputError", "message", message);
        }
        if (path.startsWith("/api/mcp/")) {
            return body(HttpStatus.BAD_REQUEST, "McpConnectionError", "transport", path.startsWith("/api/mcp/probe") ? "remote" : "config",
                    "message", message);
        }
        return body(HttpStatus.BAD_REQUEST, tag, "message", message);
    }

    /** Names the field of a body whose JSON has the wrong shape, and says so when the body is no JSON at all. */
    private static String problem(Throwable cause) {
        if (!(cause instanceof JacksonException jackson)) {
            return firstLine(String.valueOf(cause.getMessage()));
        }
        String message = firstLine(String.valueOf(jackson.getOriginalMessage()));
        if (!jackson.getPath().isEmpty()) {
            return "`" + field(jackson.getPath()) + "`: " + message;
        }
        return jackson instanceof StreamReadException ? "the body is not valid JSON: " + message : message;
    }

    /** {@code config.args[0]}: where in the body the problem is. */
    private static String field(List<JacksonException.Reference> path) {
        StringBuilder field = new StringBuilder();
        for (JacksonException.Reference reference : path) {
            if (reference.getPropertyName() != null) {
                field.append(field.isEmpty() ? "" : ".").append(reference.getPropertyName());
            }
            else if (reference.getIndex() >= 0) {
                field.append('[').append(reference.getIndex()).append(']');
            }
        }
        return field.toString();
    }

    /** No route, a method or media type the route does not take: the status WebFlux chose, not a 500. */
    @ExceptionHandler
    ResponseEntity<Map<String, Object>> unrouted(ResponseStatusException ex) {
        String tag = ex.getStatusCode().value() == HttpStatus.NOT_FOUND.value() ? "RouteNotFound" : "HttpApiError";
        String reason = ex.getReason() == null ? ex.getStatusCode().toString() : ex.getReason();
        Map<String, Object> error = body(ex.getStatusCode(), tag, "message", reason).getBody();
        return new ResponseEntity<>(error, ex.getHeaders(), ex.getStatusCode());
    }

    @ExceptionHandler
    ResponseEntity<Map<String, Object>> failed(Exception ex) throws Exception {
        if (DisconnectedClientHelper.isClientDisconnectedException(ex)) {
            // The client left (a storm abandons requests by the hundred): nobody is there to answer, and nothing
            // failed here. Passed on, Spring logs it as a disconnect at debug, not as an error with a stack trace.
            throw ex;
        }
        return answer(ex);
    }

    /** The answer to a failure: Executor's tagged error where one is listed, else an internal error, logged. */
    ResponseEntity<Map<String, Object>> answer(Throwable ex) {
        // As Spring would for handlers of their own: a known failure is found behind its wrappers too.
        for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
            for (Answer<?> answer : ANSWERS) {
                if (answer.type().isInstance(cause)) {
                    return answer.to(cause);
                }
            }
        }
        String traceId = UUID.randomUUID().toString();
        log.error("internal error, traceId {}", traceId, ex);
        return body(HttpStatus.INTERNAL_SERVER_ERROR, "InternalError", "traceId", traceId);
    }

    private static ResponseEntity<Map<String, Object>> body(HttpStatusCode status, String tag, @Nullable Object... fields) {
        return ResponseEntity.status(status).body(tagged(tag, fields));
    }

    /** Executor's error body: {@code _tag}, then the fields in the order given (name, value, name, value…); a value may
     *  be null (an exception without a message), and is then written as JSON null. */
    private static Map<String, Object> tagged(String tag, @Nullable Object... fields) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("_tag", tag);
        for (int i = 0; i < fields.length; i += 2) {
            body.put((String) fields[i], fields[i + 1]);
        }
        return body;
    }

    private static <E extends Exception> Answer<E> answer(Class<E> type, HttpStatus status, Function<E, Map<String, Object>> body) {
        return new Answer<>(type, status, body);
    }

    /** How the API answers one kind of failure. */
    private record Answer<E extends Exception>(Class<E> type, HttpStatus status, Function<E, Map<String, Object>> body) {

        ResponseEntity<Map<String, Object>> to(Throwable ex) {
            return ResponseEntity.status(status).body(body.apply(type.cast(ex)));
        }
    }

    private static String firstLine(String text) {
        int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
    }
}
