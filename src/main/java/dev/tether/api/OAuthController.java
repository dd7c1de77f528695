package dev.tether.api;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
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
import dev.tether.oauth.ProbeResult;
import dev.tether.store.Connection;
import dev.tether.store.OAuthClient;

/**
 * Executor's OAuth routes: clients, discovery, the flows that make a connection, the callback page the browser
 * lands on and the outcome the desktop app polls for. A connection a flow made (or re-authorized) gets a fresh
 * session and catalog at once.
 */
@RestController
@RequestMapping("/api/oauth")
final class OAuthController implements BuiltinHandlers {

    public record CreateClientRequest(String owner, String slug, String authorizationUrl, String tokenUrl, String grant, String clientId,
            String clientSecret, String resource) {
    }

    public record RegisterDynamicRequest(String owner, String slug, String registrationEndpoint, String authorizationUrl, String tokenUrl,
            String resource, List<String> scopes, List<String> tokenEndpointAuthMethodsSupported, String clientName,
            String redirectUri, String originIntegration) {
    }

    public record RemoveClientRequest(String owner) {
    }

    public record ProbeRequest(String url) {
    }

    public record StartRequest(String client, String clientOwner, String owner, String name, String integration, String template,
            String identityLabel, String redirectUri) {
    }

    public record CompleteRequest(String state, String code) {
    }

    public record CancelRequest(String state) {
    }

    record ClientView(String owner, String slug, String grant, String authorizationUrl, String tokenUrl, String resource,
            String clientId, @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, Object> origin) {

        static ClientView of(OAuthClient client) {
            Map<String, Object> origin = new LinkedHashMap<>();
            if (client.dynamic()) {
                origin.put("kind", "dynamic_client_registration");
                origin.put("integration", client.originIntegration().orElse(null));
            }
            else {
                origin.put("kind", "manual");
            }
            return new ClientView(client.owner().wire(), client.slug(), client.grant(), client.authorizationUrl(), client.tokenUrl(),
                    client.resource().orElse(null), client.clientId(), origin);
        }

        /** As Executor's built-in lists a client: without its origin. */
        ClientView withoutOrigin() {
            return new ClientView(owner, slug, grant, authorizationUrl, tokenUrl, resource, clientId, null);
        }
    }

    record ProbeView(String authorizationUrl, String tokenUrl, String resource, List<String> scopesSupported,
            String registrationEndpoint, List<String> tokenEndpointAuthMethodsSupported) {

        static ProbeView of(ProbeResult probe) {
            return new ProbeView(probe.authorizationUrl(), probe.tokenUrl(), probe.resource().orElse(null),
                    probe.scopesSupported().orElse(null), probe.registrationEndpoint().orElse(null),
                    probe.tokenEndpointAuthMethodsSupported().orElse(null));
        }
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record StartView(String status, ConnectionView connection, String authorizationUrl, String state) {
    }

    private static final String BUILTIN = "executor.coreTools.oauth.";

    private final OAuthFlows flows;
    private final BuiltinArguments arguments;

    OAuthController(OAuthFlows flows, BuiltinArguments arguments) {
        this.flows = flows;
        this.arguments = arguments;
    }

    /** The built-in {@code executor.coreTools.oauth.*}: the routes' twins, with arguments as their bodies. */
    @Override
    public Map<String, BuiltinHandler> handlers() {
        Map<String, BuiltinHandler> handlers = new LinkedHashMap<>();
        // Executor's built-in lists clients without their origin, where the route gives it.
        handlers.put(BUILTIN + "clients.list", (tool, args) -> clients().map(ClientView::withoutOrigin).collectList()
                .map(clients -> Map.of("clients", clients)));
        handlers.put(BUILTIN + "clients.create", (tool, args) -> arguments.run(tool, args, CreateClientRequest.class, this::createClient));
        handlers.put(BUILTIN + "clients.registerDynamic", (tool, args) -> arguments.run(tool, args, RegisterDynamicRequest.class,
                request -> registerDynamic(request, flows::redirectUri)));
        handlers.put(BUILTIN + "clients.remove", (tool, args) -> arguments.run(tool, args, RemoveClientArguments.class,
                request -> removeClient(request.slug(), new RemoveClientRequest(request.owner()))));
        handlers.put(BUILTIN + "probe", (tool, args) -> arguments.run(tool, args, ProbeRequest.class, this::probe));
        handlers.put(BUILTIN + "start", (tool, args) -> arguments.run(tool, args, StartRequest.class,
                request -> start(request, flows::redirectUri)));
        handlers.put(BUILTIN + "cancel", (tool, args) -> arguments.run(tool, args, CancelRequest.class, this::cancel));
        return handlers;
    }

    /** The built-in {@code clients.remove} takes in its arguments what the route takes in its path and body. */
    public record RemoveClientArguments(String owner, String slug) {
    }

    @GetMapping("/clients")
    Flux<ClientView> clients() {
        return flows.clients().map(ClientView::of);
    }

    @PostMapping("/clients")
    Mono<Map<String, String>> createClient(@RequestBody CreateClientRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> new OAuthFlows.NewClient(Inputs.owner(request.owner(), "owner"), slug(request.slug()),
                        Inputs.requireText(request.authorizationUrl(), "authorizationUrl"), Inputs.requireText(request.tokenUrl(), "tokenUrl"),
                        Inputs.requireText(request.grant(), "grant"), Inputs.requireText(request.clientId(), "clientId"),
                        required(request.clientSecret(), "clientSecret"), Inputs.optional(request.resource())))
                .flatMap(flows::createClient)
                .onErrorMap(IllegalArgumentException.class, ex -> InvalidInputException.decode(ex.getMessage()))
                .map(slug -> Map.of("client", slug));
    }

    @PostMapping("/clients/register-dynamic")
    Mono<Map<String, String>> registerDynamic(@RequestBody RegisterDynamicRequest request, ServerWebExchange exchange) {
        return registerDynamic(request, () -> requestOrigin(exchange));
    }

    private Mono<Map<String, String>> registerDynamic(RegisterDynamicRequest request, Supplier<String> ours) {
        Bounds.check(request);
        return Mono.fromCallable(() -> new OAuthFlows.DynamicRegistration(Inputs.owner(request.owner(), "owner"), slug(request.slug()),
                        Inputs.requireText(request.registrationEndpoint(), "registrationEndpoint"),
                        Inputs.requireText(request.authorizationUrl(), "authorizationUrl"), Inputs.requireText(request.tokenUrl(), "tokenUrl"),
                        Inputs.optional(request.resource()), required(request.scopes(), "scopes"),
                        Optional.ofNullable(request.tokenEndpointAuthMethodsSupported()), Inputs.optional(request.clientName()),
                        Inputs.optional(request.originIntegration())))
                .flatMap(registration -> flows.registerDynamic(registration, redirectUri(request.redirectUri(), ours)))
                .map(slug -> Map.of("client", slug));
    }

    @DeleteMapping("/clients/{slug}")
    Mono<Map<String, Boolean>> removeClient(@PathVariable String slug, @RequestBody RemoveClientRequest request) {
        Bounds.check("slug", slug);
        Bounds.check(request);
        return Mono.fromCallable(() -> Inputs.owner(request.owner(), "owner"))
                .flatMap(owner -> flows.removeClient(owner, slug))
                // Executor answers true whether or not there was one: removing is idempotent.
                .thenReturn(Map.of("removed", true));
    }

    @PostMapping("/probe")
    Mono<ProbeView> probe(@RequestBody ProbeRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> Inputs.requireText(request.url(), "url")).flatMap(flows::probe).map(ProbeView::of);
    }

    @PostMapping("/start")
    Mono<StartView> start(@RequestBody StartRequest request, ServerWebExchange exchange) {
        return start(request, () -> requestOrigin(exchange));
    }

    private Mono<StartView> start(StartRequest request, Supplier<String> ours) {
        Bounds.check(request);
        return Mono.fromCallable(() -> new OAuthFlows.Start(Inputs.requireText(request.client(), "client"),
                        Inputs.owner(request.clientOwner(), "clientOwner"), Inputs.owner(request.owner(), "owner"),
                        Inputs.requireText(request.name(), "name"), Inputs.requireText(request.integration(), "integration"),
                        Inputs.requireText(request.template(), "template"), Inputs.optional(request.identityLabel())))
                .flatMap(start -> flows.start(start, redirectUri(request.redirectUri(), ours)))
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
                .flatMap(state -> flows.complete(state, Inputs.requireText(request.code(), "code")))
                .map(OAuthController::view);
    }

    @PostMapping("/cancel")
    Mono<Map<String, Boolean>> cancel(@RequestBody CancelRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> Map.of("cancelled", flows.cancel(Inputs.requireText(request.state(), "state"))));
    }

    /** The page the browser lands on: it completes the flow and tells the user (and the window that opened it) how it went. */
    @GetMapping(value = "/callback", produces = MediaType.TEXT_HTML_VALUE)
    Mono<ResponseEntity<String>> callback(@RequestParam(required = false) String state, @RequestParam(required = false) String code,
            @RequestParam(required = false) String error, @RequestParam(name = "error_description", required = false) String errorDescription) {
        Bounds.check("state", state);
        Bounds.check("code", code);
        Bounds.check("error", error);
        Bounds.check("error_description", errorDescription);
        if (state == null || state.isEmpty()) {
            throw InvalidInputException.decode("`state` is required");
        }
        return flows.callback(state, Inputs.optional(code), Inputs.optional(error), Inputs.optional(errorDescription))
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

    /** The caller's redirect URI when it gives one; else Tether's. */
    private static String redirectUri(String requested, Supplier<String> ours) {
        return requested == null || requested.isBlank() ? ours.get() : requested;
    }

    /** Tether's redirect URI on the origin the request came to (unless a web base URL is configured). */
    private String requestOrigin(ServerWebExchange exchange) {
        URI uri = exchange.getRequest().getURI();
        return flows.redirectUri(uri.getScheme() + "://" + uri.getRawAuthority());
    }

    private static String slug(String value) {
        String slug = Inputs.requireText(value, "slug");
        if (!slug.matches("[A-Za-z0-9][A-Za-z0-9._-]*")) {
            throw InvalidInputException.decode("`slug` may hold letters, digits, '.', '_' and '-', and start with a letter or digit");
        }
        return slug;
    }

    private static <T> T required(T value, String field) {
        if (value == null) {
            throw InvalidInputException.decode("`" + field + "` is required");
        }
        return value;
    }
}
