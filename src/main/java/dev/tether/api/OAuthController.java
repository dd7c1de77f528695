package dev.tether.api;

import java.util.Map;

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
import dev.tether.oauth.CallbackPage;
import dev.tether.oauth.OAuthFlows;
import dev.tether.oauth.OAuthRequests.CancelRequest;
import dev.tether.oauth.OAuthRequests.StartRequest;
import dev.tether.oauth.OAuthViews;
import dev.tether.oauth.OAuthViews.StartView;
import dev.tether.oauth.RedirectUris;
import dev.tether.views.Views.ConnectionView;

/**
 * Executor's OAuth flow routes: the flows that make a connection through a client ({@link OAuthClientsController}),
 * the callback page the browser lands on and the outcome the desktop app polls for. A connection a flow made (or
 * re-authorized) gets a fresh session and catalog at once. The built-ins that are twins of these routes are
 * {@code oauth.OAuthBuiltins}; both check the bodies ({@code oauth.OAuthRequests}) and answer ({@code oauth.OAuthViews})
 * alike.
 */
@RestController
@RequestMapping("/api/oauth")
final class OAuthController {

    public record CompleteRequest(String state, String code, String iss) {
    }

    private final OAuthFlows flows;
    private final RedirectUris redirectUris;

    OAuthController(OAuthFlows flows, RedirectUris redirectUris) {
        this.flows = flows;
        this.redirectUris = redirectUris;
    }

    @PostMapping("/start")
    Mono<StartView> start(@RequestBody StartRequest request, ServerWebExchange exchange) {
        return Mono.fromCallable(request::checked)
                .flatMap(start -> flows.start(start, redirectUris.forRequest(request.redirectUri(), exchange.getRequest().getURI())))
                .map(StartView::of);
    }

    @PostMapping("/complete")
    Mono<ConnectionView> complete(@RequestBody CompleteRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> Inputs.requireText(request.state(), "state"))
                .flatMap(state -> flows.complete(state, Inputs.requireText(request.code(), "code"), Inputs.optional(request.iss())))
                .map(OAuthViews::connection);
    }

    @PostMapping("/cancel")
    Mono<Map<String, Boolean>> cancel(@RequestBody CancelRequest request) {
        return Mono.fromCallable(request::checked).flatMap(flows::cancel).map(cancelled -> Map.of("cancelled", cancelled));
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
                        .body(CallbackPage.render(CallbackPage.message(outcome))));
    }

    /** The outcome of a browser flow, once, for the desktop app that cannot receive the page's message; {@code null} until then. */
    @GetMapping("/await/{sessionId}")
    Mono<ResponseEntity<Object>> awaitOutcome(@PathVariable String sessionId) {
        Bounds.check("sessionId", sessionId);
        return Mono.fromSupplier(() -> ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON)
                .body(flows.awaitOutcome(sessionId).<Object>map(CallbackPage::message).orElse(NULL_BODY)));
    }

    /** Jackson writes a JSON {@code null} for this, where a null body would be an empty answer. */
    private static final Object NULL_BODY = tools.jackson.databind.node.NullNode.getInstance();
}
