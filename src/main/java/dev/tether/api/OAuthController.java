package dev.tether.api;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

import dev.tether.api.input.Bounds;
import dev.tether.api.input.Inputs;
import dev.tether.api.input.InvalidInputException;
import dev.tether.calls.builtin.BuiltinHandler;
import dev.tether.calls.builtin.BuiltinHandlers;
import dev.tether.views.Views.ConnectionView;
import dev.tether.oauth.OAuthFlows;
import dev.tether.oauth.OAuthFlows.Connected;
import dev.tether.oauth.OAuthFlows.Outcome;
import dev.tether.oauth.OAuthFlows.Redirect;
import dev.tether.oauth.RedirectUris;
import dev.tether.store.Connection;

/**
 * Executor's OAuth flow routes: the flows that make a connection through a client ({@link OAuthClientsController}),
 * the callback page the browser lands on and the outcome the desktop app polls for. A connection a flow made (or
 * re-authorized) gets a fresh session and catalog at once.
 */
@RestController
@RequestMapping("/api/oauth")
final class OAuthController implements BuiltinHandlers {

    public record StartRequest(String client, String clientOwner, String owner, String name, String integration, String template,
            String identityLabel, String redirectUri) {
    }

    public record CompleteRequest(String state, String code, String iss) {
    }

    public record CancelRequest(String state) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record StartView(String status, @Nullable ConnectionView connection, @Nullable String authorizationUrl, @Nullable String state) {
    }

    private static final String BUILTIN = "executor.coreTools.oauth.";

    private final OAuthFlows flows;
    private final RedirectUris redirectUris;
    private final BuiltinArguments arguments;

    OAuthController(OAuthFlows flows, RedirectUris redirectUris, BuiltinArguments arguments) {
        this.flows = flows;
        this.redirectUris = redirectUris;
        this.arguments = arguments;
    }

    /** The built-in {@code executor.coreTools.oauth.start} and {@code cancel}: the routes' twins, with arguments as their bodies. */
    @Override
    public Map<String, BuiltinHandler> handlers() {
        Map<String, BuiltinHandler> handlers = new LinkedHashMap<>();
        handlers.put(BUILTIN + "start", (tool, args) -> arguments.run(tool, args, StartRequest.class,
                request -> start(request, redirectUris::forDaemon)));
        handlers.put(BUILTIN + "cancel", (tool, args) -> arguments.run(tool, args, CancelRequest.class, this::cancel));
        return handlers;
    }

    @PostMapping("/start")
    Mono<StartView> start(@RequestBody StartRequest request, ServerWebExchange exchange) {
        return start(request, () -> redirectUris.forRequest(OAuthRedirect.origin(exchange)));
    }

    private Mono<StartView> start(StartRequest request, Supplier<String> ours) {
        Bounds.check(request);
        return Mono.fromCallable(() -> new OAuthFlows.Start(Inputs.requireText(request.client(), "client"),
                        Inputs.owner(request.clientOwner(), "clientOwner"), Inputs.owner(request.owner(), "owner"),
                        Inputs.requireText(request.name(), "name"), Inputs.requireText(request.integration(), "integration"),
                        Inputs.requireText(request.template(), "template"), Inputs.optional(request.identityLabel())))
                .flatMap(start -> flows.start(start, OAuthRedirect.choose(request.redirectUri(), ours)))
                .map(OAuthController::startView);
    }

    private static StartView startView(OAuthFlows.Started started) {
        return started instanceof Connected connected ? new StartView("connected", view(connected.connection()), null, null)
                : new StartView("redirect", null, ((Redirect) started).authorizationUrl(), ((Redirect) started).state());
    }

    @PostMapping("/complete")
    Mono<ConnectionView> complete(@RequestBody CompleteRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> Inputs.requireText(request.state(), "state"))
                .flatMap(state -> flows.complete(state, Inputs.requireText(request.code(), "code"), Inputs.optional(request.iss())))
                .map(OAuthController::view);
    }

    @PostMapping("/cancel")
    Mono<Map<String, Boolean>> cancel(@RequestBody CancelRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> Inputs.requireText(request.state(), "state")).flatMap(flows::cancel)
                .map(cancelled -> Map.of("cancelled", cancelled));
    }

    /** The page the browser lands on: it completes the flow and tells the user (and the window that opened it) how it went. */
    @GetMapping(value = "/callback", produces = MediaType.TEXT_HTML_VALUE)
    Mono<ResponseEntity<String>> callback(@RequestParam(required = false) String state, @RequestParam(required = false) String code,
            @RequestParam(required = false) String error, @RequestParam(name = "error_description", required = false) String errorDescription,
            @RequestParam(required = false) String iss) {
        Bounds.check("state", state);
        Bounds.check("code", code);
        Bounds.check("error", error);
        Bounds.check("error_description", errorDescription);
        Bounds.check("iss", iss);
        if (state == null || state.isEmpty()) {
            throw InvalidInputException.decode("`state` is required");
        }
        return flows.callback(state, Inputs.optional(code), Inputs.optional(error), Inputs.optional(errorDescription), Inputs.optional(iss))
                .map(outcome -> ResponseEntity.ok()
                        .header("Cache-Control", "no-store")
                        .header("Referrer-Policy", "no-referrer")
                        .contentType(MediaType.TEXT_HTML)
                        .body(CallbackPage.render(payload(outcome))));
    }

    /** The outcome of a browser flow, once, for the desktop app that cannot receive the page's message; {@code null} until then. */
    @GetMapping("/await/{sessionId}")
    Mono<ResponseEntity<Object>> awaitOutcome(@PathVariable String sessionId) {
        Bounds.check("sessionId", sessionId);
        return Mono.fromSupplier(() -> ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON)
                .body(flows.awaitOutcome(sessionId).<Object>map(OAuthController::payload).orElse(NULL_BODY)));
    }

    /** Jackson writes a JSON {@code null} for this, where a null body would be an empty answer. */
    private static final Object NULL_BODY = tools.jackson.databind.node.NullNode.getInstance();

    /** Executor's popup message: {@code executor:oauth-result}, with the connection or the error. */
    private static Map<String, Object> payload(Outcome outcome) {
        Map<String, Object> payload = new LinkedHashMap<>();
        payload.put("type", CallbackPage.MESSAGE_TYPE);
        payload.put("ok", outcome.ok());
        payload.put("sessionId", outcome.state());
        outcome.connection().ifPresentOrElse(connection -> {
            ConnectionView view = view(connection);
            payload.put("owner", view.owner());
            payload.put("name", view.name());
            payload.put("integration", view.integration());
            payload.put("template", view.template());
            payload.put("provider", view.provider());
            payload.put("address", view.address());
            payload.put("identityLabel", view.identityLabel());
            payload.put("expiresAt", view.expiresAt());
            payload.put("oauthClient", view.oauthClient());
            payload.put("oauthClientOwner", view.oauthClientOwner());
            payload.put("oauthScope", view.oauthScope());
        }, () -> {
            payload.put("error", outcome.error());
            outcome.details().filter(details -> !details.equals(outcome.error())).ifPresent(details -> payload.put("errorDetails", details));
        });
        return payload;
    }

    /** As Executor answers a connection from these routes: without {@code lastHealth}. */
    private static ConnectionView view(Connection connection) {
        return ConnectionView.withoutHealth(connection);
    }
}
