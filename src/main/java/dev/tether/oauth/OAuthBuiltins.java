package dev.tether.oauth;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.api.input.Bounds;
import dev.tether.calls.builtin.BuiltinArguments;
import dev.tether.calls.builtin.BuiltinHandler;
import dev.tether.calls.builtin.BuiltinHandlers;
import dev.tether.oauth.OAuthRequests.CancelRequest;
import dev.tether.oauth.OAuthRequests.CreateClientRequest;
import dev.tether.oauth.OAuthRequests.ProbeRequest;
import dev.tether.oauth.OAuthRequests.RegisterDynamicRequest;
import dev.tether.oauth.OAuthRequests.RemoveClientArguments;
import dev.tether.oauth.OAuthRequests.RemoveClientRequest;
import dev.tether.oauth.OAuthRequests.StartRequest;
import dev.tether.oauth.OAuthViews.ClientView;
import dev.tether.oauth.OAuthViews.ProbeView;
import dev.tether.oauth.OAuthViews.StartView;

/**
 * The built-ins {@code executor.coreTools.oauth.*}: twins of Executor's OAuth routes, their arguments read as the
 * routes' bodies ({@link OAuthRequests}) and answered as the routes answer ({@link OAuthViews}). A flow started from
 * code is sent back to this daemon's own origin unless the caller names a redirect URI.
 */
@Component
final class OAuthBuiltins implements BuiltinHandlers {

    private static final String BUILTIN = "executor.coreTools.oauth.";

    private final OAuthFlows flows;
    private final OAuthClients clients;
    private final RedirectUris redirectUris;
    private final BuiltinArguments arguments;

    OAuthBuiltins(OAuthFlows flows, OAuthClients clients, RedirectUris redirectUris, BuiltinArguments arguments) {
        this.flows = flows;
        this.clients = clients;
        this.redirectUris = redirectUris;
        this.arguments = arguments;
    }

    @Override
    public Map<String, BuiltinHandler> handlers() {
        Map<String, BuiltinHandler> handlers = new LinkedHashMap<>();
        handlers.put(BUILTIN + "start", (tool, args) -> arguments.run(tool, args, StartRequest.class, request ->
                Mono.fromCallable(request::checked)
                        .flatMap(start -> flows.start(start, redirectUris.forDaemon(request.redirectUri())))
                        .map(StartView::of)));
        handlers.put(BUILTIN + "cancel", (tool, args) -> arguments.run(tool, args, CancelRequest.class, request ->
                Mono.fromCallable(request::checked).flatMap(flows::cancel).map(cancelled -> Map.of("cancelled", cancelled))));
        // Executor's built-in lists clients without their origin, where the route gives it.
        handlers.put(BUILTIN + "clients.list", (tool, args) -> clients.clients().map(client -> ClientView.of(client).withoutOrigin())
                .collectList().map(listed -> Map.of("clients", listed)));
        handlers.put(BUILTIN + "clients.create", (tool, args) -> arguments.run(tool, args, CreateClientRequest.class, request ->
                Mono.fromCallable(request::checked).flatMap(clients::createClient)
                        .onErrorMap(IllegalArgumentException.class, OAuthRequests::refused)
                        .map(slug -> Map.of("client", slug))));
        handlers.put(BUILTIN + "clients.registerDynamic", (tool, args) -> arguments.run(tool, args, RegisterDynamicRequest.class, request ->
                Mono.fromCallable(request::checked)
                        .flatMap(registration -> clients.registerDynamic(registration, redirectUris.forDaemon(request.redirectUri())))
                        .map(slug -> Map.of("client", slug))));
        handlers.put(BUILTIN + "clients.remove", (tool, args) -> arguments.run(tool, args, RemoveClientArguments.class, request -> {
            // As the route: the slug of its path first, then its body.
            Bounds.check("slug", request.slug());
            return Mono.fromCallable(new RemoveClientRequest(request.owner())::checked)
                    .flatMap(owner -> clients.removeClient(owner, request.slug()))
                    // Executor answers true whether or not there was one: removing is idempotent.
                    .thenReturn(Map.of("removed", true));
        }));
        handlers.put(BUILTIN + "probe", (tool, args) -> arguments.run(tool, args, ProbeRequest.class, request ->
                Mono.fromCallable(request::checked).flatMap(clients::probe).map(ProbeView::of)));
        return handlers;
    }
}
