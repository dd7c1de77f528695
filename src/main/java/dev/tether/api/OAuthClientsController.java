package dev.tether.api;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.api.input.Bounds;
import dev.tether.api.input.Inputs;
import dev.tether.api.input.InvalidInputException;
import dev.tether.calls.builtin.BuiltinHandler;
import dev.tether.calls.builtin.BuiltinHandlers;
import dev.tether.oauth.ClientMetadataDocument;
import dev.tether.oauth.OAuthClients;
import dev.tether.oauth.ProbeResult;
import dev.tether.oauth.RedirectUris;
import dev.tether.store.OAuthClient;

/**
 * Executor's OAuth client routes: the apps a flow ({@link OAuthController}) connects through, listed, saved by hand,
 * registered dynamically or removed, and the probe that reads a server's metadata to fill the form.
 */
@RestController
@RequestMapping("/api/oauth")
final class OAuthClientsController implements BuiltinHandlers {

    public record CreateClientRequest(String owner, String slug, String authorizationUrl, String tokenUrl, String grant, String clientId,
            String clientSecret, String resource) {
    }

    public record RegisterDynamicRequest(String owner, String slug, String registrationEndpoint, String authorizationUrl, String tokenUrl,
            String resource, List<String> scopes, List<String> tokenEndpointAuthMethodsSupported, String clientName,
            String redirectUri, String originIntegration) {
    }

    public record RemoveClientRequest(String owner) {
    }

    /** The built-in {@code clients.remove} takes in its arguments what the route takes in its path and body. */
    public record RemoveClientArguments(String owner, String slug) {
    }

    public record ProbeRequest(String url) {
    }

    record ClientView(String owner, String slug, String grant, String authorizationUrl, String tokenUrl, @Nullable String resource,
            String clientId, @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable Map<String, Object> origin) {

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

    record ProbeView(String authorizationUrl, String tokenUrl, @Nullable String resource, @Nullable List<String> scopesSupported,
            @Nullable String registrationEndpoint, @Nullable List<String> tokenEndpointAuthMethodsSupported) {

        static ProbeView of(ProbeResult probe) {
            return new ProbeView(probe.authorizationUrl(), probe.tokenUrl(), probe.resource().orElse(null),
                    probe.scopesSupported().orElse(null), probe.registrationEndpoint().orElse(null),
                    probe.tokenEndpointAuthMethodsSupported().orElse(null));
        }
    }

    private static final String BUILTIN = "executor.coreTools.oauth.";

    private final OAuthClients clients;
    private final ClientMetadataDocument metadataDocument;
    private final RedirectUris redirectUris;
    private final BuiltinArguments arguments;

    OAuthClientsController(OAuthClients clients, ClientMetadataDocument metadataDocument, RedirectUris redirectUris,
            BuiltinArguments arguments) {
        this.clients = clients;
        this.metadataDocument = metadataDocument;
        this.redirectUris = redirectUris;
        this.arguments = arguments;
    }

    /** The built-in {@code executor.coreTools.oauth.clients.*} and {@code probe}: the routes' twins, with arguments as their bodies. */
    @Override
    public Map<String, BuiltinHandler> handlers() {
        Map<String, BuiltinHandler> handlers = new LinkedHashMap<>();
        // Executor's built-in lists clients without their origin, where the route gives it.
        handlers.put(BUILTIN + "clients.list", (tool, args) -> clients().map(ClientView::withoutOrigin).collectList()
                .map(clients -> Map.of("clients", clients)));
        handlers.put(BUILTIN + "clients.create", (tool, args) -> arguments.run(tool, args, CreateClientRequest.class, this::createClient));
        handlers.put(BUILTIN + "clients.registerDynamic", (tool, args) -> arguments.run(tool, args, RegisterDynamicRequest.class,
                request -> registerDynamic(request, redirectUris::forDaemon)));
        handlers.put(BUILTIN + "clients.remove", (tool, args) -> arguments.run(tool, args, RemoveClientArguments.class,
                request -> removeClient(request.slug(), new RemoveClientRequest(request.owner()))));
        handlers.put(BUILTIN + "probe", (tool, args) -> arguments.run(tool, args, ProbeRequest.class, this::probe));
        return handlers;
    }

    @GetMapping("/clients")
    Flux<ClientView> clients() {
        return clients.clients().map(ClientView::of);
    }

    @PostMapping("/clients")
    Mono<Map<String, String>> createClient(@RequestBody CreateClientRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> new OAuthClients.NewClient(Inputs.owner(request.owner(), "owner"), slug(request.slug()),
                        Inputs.requireText(request.authorizationUrl(), "authorizationUrl"), Inputs.requireText(request.tokenUrl(), "tokenUrl"),
                        Inputs.requireText(request.grant(), "grant"), Inputs.requireText(request.clientId(), "clientId"),
                        required(request.clientSecret(), "clientSecret"), Inputs.optional(request.resource())))
                .flatMap(clients::createClient)
                .onErrorMap(IllegalArgumentException.class, ex -> InvalidInputException.decode(ex.getMessage()))
                .map(slug -> Map.of("client", slug));
    }

    @PostMapping("/clients/register-dynamic")
    Mono<Map<String, String>> registerDynamic(@RequestBody RegisterDynamicRequest request, ServerWebExchange exchange) {
        return registerDynamic(request, () -> redirectUris.forRequest(OAuthRedirect.origin(exchange)));
    }

    private Mono<Map<String, String>> registerDynamic(RegisterDynamicRequest request, Supplier<String> ours) {
        Bounds.check(request);
        return Mono.fromCallable(() -> new OAuthClients.DynamicRegistration(Inputs.owner(request.owner(), "owner"), slug(request.slug()),
                        Inputs.requireText(request.registrationEndpoint(), "registrationEndpoint"),
                        Inputs.requireText(request.authorizationUrl(), "authorizationUrl"), Inputs.requireText(request.tokenUrl(), "tokenUrl"),
                        Inputs.optional(request.resource()), required(request.scopes(), "scopes"),
                        Optional.ofNullable(request.tokenEndpointAuthMethodsSupported()), Inputs.optional(request.clientName()),
                        Inputs.optional(request.originIntegration())))
                .flatMap(registration -> clients.registerDynamic(registration, OAuthRedirect.choose(request.redirectUri(), ours)))
                .map(slug -> Map.of("client", slug));
    }

    @DeleteMapping("/clients/{slug}")
    Mono<Map<String, Boolean>> removeClient(@PathVariable String slug, @RequestBody RemoveClientRequest request) {
        Bounds.check("slug", slug);
        Bounds.check(request);
        return Mono.fromCallable(() -> Inputs.owner(request.owner(), "owner"))
                .flatMap(owner -> clients.removeClient(owner, slug))
                // Executor answers true whether or not there was one: removing is idempotent.
                .thenReturn(Map.of("removed", true));
    }

    /**
     * Tether's client metadata document, which authorization servers fetch when Tether goes by its URL as
     * {@code client_id}; 404 without {@code tether.oauth.public-base-url}. No token: the servers that fetch it have none.
     */
    @GetMapping(value = "/client-metadata.json", produces = MediaType.APPLICATION_JSON_VALUE)
    ResponseEntity<Map<String, Object>> clientMetadata() {
        return metadataDocument.document()
                .map(document -> ResponseEntity.ok().cacheControl(CacheControl.maxAge(Duration.ofHours(1)).cachePublic()).body(document))
                .orElseGet(() -> ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("_tag", "NotFoundError", "message",
                        "Tether publishes no client metadata document: tether.oauth.public-base-url is not set")));
    }

    @PostMapping("/probe")
    Mono<ProbeView> probe(@RequestBody ProbeRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> Inputs.requireText(request.url(), "url")).flatMap(clients::probe).map(ProbeView::of);
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
