package dev.tether.api;

import java.time.Duration;
import java.util.Map;

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
import dev.tether.oauth.ClientMetadataDocument;
import dev.tether.oauth.OAuthClients;
import dev.tether.oauth.OAuthRequests;
import dev.tether.oauth.OAuthRequests.CreateClientRequest;
import dev.tether.oauth.OAuthRequests.ProbeRequest;
import dev.tether.oauth.OAuthRequests.RegisterDynamicRequest;
import dev.tether.oauth.OAuthRequests.RemoveClientRequest;
import dev.tether.oauth.OAuthViews.ClientView;
import dev.tether.oauth.OAuthViews.ProbeView;
import dev.tether.oauth.RedirectUris;

/**
 * Executor's OAuth client routes: the apps a flow ({@link OAuthController}) connects through, listed, saved by hand,
 * registered dynamically or removed, and the probe that reads a server's metadata to fill the form. The built-ins that
 * are twins of these routes are {@code oauth.OAuthBuiltins}; both check the bodies ({@code oauth.OAuthRequests}) and
 * answer ({@code oauth.OAuthViews}) alike.
 */
@RestController
@RequestMapping("/api/oauth")
final class OAuthClientsController {

    private final OAuthClients clients;
    private final ClientMetadataDocument metadataDocument;
    private final RedirectUris redirectUris;

    OAuthClientsController(OAuthClients clients, ClientMetadataDocument metadataDocument, RedirectUris redirectUris) {
        this.clients = clients;
        this.metadataDocument = metadataDocument;
        this.redirectUris = redirectUris;
    }

    @GetMapping("/clients")
    Flux<ClientView> clients() {
        return clients.clients().map(ClientView::of);
    }

    @PostMapping("/clients")
    Mono<Map<String, String>> createClient(@RequestBody CreateClientRequest request) {
        return Mono.fromCallable(request::checked).flatMap(clients::createClient)
                .onErrorMap(IllegalArgumentException.class, OAuthRequests::refused)
                .map(slug -> Map.of("client", slug));
    }

    @PostMapping("/clients/register-dynamic")
    Mono<Map<String, String>> registerDynamic(@RequestBody RegisterDynamicRequest request, ServerWebExchange exchange) {
        return Mono.fromCallable(request::checked)
                .flatMap(registration -> clients.registerDynamic(registration,
                        redirectUris.forRequest(request.redirectUri(), exchange.getRequest().getURI())))
                .map(slug -> Map.of("client", slug));
    }

    @DeleteMapping("/clients/{slug}")
    Mono<Map<String, Boolean>> removeClient(@PathVariable String slug, @RequestBody RemoveClientRequest request) {
        Bounds.check("slug", slug);
        return Mono.fromCallable(request::checked)
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
        return Mono.fromCallable(request::checked).flatMap(clients::probe).map(ProbeView::of);
    }
}
