package dev.tether.api;

import java.net.URI;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import dev.tether.api.input.ServerConfigs.ConfigInput;
import dev.tether.catalog.CatalogService;
import dev.tether.httpauth.AuthMethods;
import dev.tether.httpauth.InvalidAuthMethodException;
import dev.tether.mcp.McpSessions;
import dev.tether.mcp.RemoteServer;
import dev.tether.oauth.OAuthClients;
import dev.tether.session.SessionPool;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationNotFoundException;
import dev.tether.store.IntegrationStore;
import dev.tether.store.ServerConfig;
import dev.tether.store.RemoteConfig;
import dev.tether.store.StdioConfig;
import dev.tether.api.input.Bounds;
import dev.tether.api.input.Inputs;
import dev.tether.api.input.InvalidInputException;
import dev.tether.api.input.ServerConfigs;
import dev.tether.api.input.Slugs;
import dev.tether.security.StdioGate;

/** Registers MCP servers, Executor's way of creating an MCP integration, and probes remote ones. */
@RestController
@RequestMapping("/api/mcp")
final class McpServersController {

    /** Body of {@code POST /api/mcp/servers}: a stdio or a remote server. */
    public record AddServerRequest(String transport, String name, String description, String slug, String command,
            List<String> args, Map<String, String> env, String cwd, String endpoint, String remoteTransport,
            Map<String, String> queryParams, Map<String, String> headers, Object auth, Object authenticationTemplate) {

        ConfigInput config() {
            return new ConfigInput(transport, command, args, env, cwd, endpoint, remoteTransport, queryParams, headers);
        }
    }

    public record ConfigRequest(ConfigInput config) {
    }

    /** Body of {@code POST /api/mcp/servers/{slug}/auth}: methods to merge into, or replace, the declared ones. */
    public record AuthRequest(@Nullable Object authenticationTemplate, @Nullable String mode) {
    }

    public record ProbeRequest(String endpoint, Map<String, String> headers, Map<String, String> queryParams) {
    }

    record ServerView(String slug, String description, String kind, boolean canRemove, boolean canRefresh,
            Map<String, Object> config) {

        static ServerView of(Integration integration) {
            return new ServerView(integration.slug(), integration.description(), "mcp", true, true,
                    ServerConfigs.view(integration.config()));
        }
    }

    record ProbeView(boolean connected, boolean requiresAuthentication, boolean requiresOAuth,
            boolean supportsDynamicRegistration, String name, String slug, @Nullable Integer toolCount, @Nullable String serverName) {
    }

    private final IntegrationStore integrations;
    private final SessionPool pool;
    private final CatalogService catalogs;
    private final McpSessions sessions;
    private final StdioGate stdioGate;
    private final Clock clock;
    private final OAuthClients oauth;

    McpServersController(IntegrationStore integrations, SessionPool pool, CatalogService catalogs, McpSessions sessions,
            StdioGate stdioGate, Clock clock, OAuthClients oauth) {
        this.integrations = integrations;
        this.pool = pool;
        this.catalogs = catalogs;
        this.sessions = sessions;
        this.stdioGate = stdioGate;
        this.clock = clock;
        this.oauth = oauth;
    }

    /** Registers the server, with no connection: as in Executor, the client then makes one with {@code POST /api/connections}. */
    @PostMapping("/servers")
    Mono<Map<String, String>> add(@RequestBody AddServerRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> integration(request))
                .flatMap(integrations::create)
                .flatMap(created -> catalogs.changed(created.slug()).thenReturn(created))
                .map(created -> Map.of("slug", created.slug()));
    }

    /** As in Executor 1.5.9, whose document declares no 404 here: an unknown slug answers {@code null}. */
    @GetMapping("/servers/{slug}")
    Mono<Optional<ServerView>> get(@PathVariable String slug) {
        Bounds.check("slug", slug);
        return integrations.find(slug).map(ServerView::of).map(Optional::of).defaultIfEmpty(Optional.empty());
    }

    @DeleteMapping("/servers/{slug}")
    Mono<Map<String, Boolean>> remove(@PathVariable String slug) {
        Bounds.check("slug", slug);
        return integrations.delete(slug).flatMap(removed -> pool.retire(slug).then(catalogs.changed(slug)).thenReturn(Map.of("removed", removed)));
    }

    /** Replaces a server's config; its live sessions end and its catalog becomes stale. */
    @PostMapping("/servers/{slug}/config")
    Mono<Map<String, Object>> configure(@PathVariable String slug, @RequestBody ConfigRequest request) {
        Bounds.check("slug", slug);
        Bounds.check(request);
        return Mono.fromCallable(() -> checked(ServerConfigs.parse(require(request).config())))
                .flatMap(config -> find(slug).flatMap(existing -> integrations.update(existing.withConfig(keepAuth(existing.config(), config),
                        clock.instant()))))
                .flatMap(updated -> pool.retire(slug).then(catalogs.changed(slug)).thenReturn(Map.<String, Object>of("config", ServerConfigs.view(updated.config()))));
    }

    /**
     * Merges auth methods into a remote server's declared ones (a method whose slug matches replaces it, others are
     * appended) or replaces them all, as Executor's {@code configureAuth}; answers the methods now declared. As in
     * Executor, an unknown slug or a stdio server is a no-op that answers none.
     */
    @PostMapping("/servers/{slug}/auth")
    Mono<Map<String, Object>> configureAuth(@PathVariable String slug, @RequestBody AuthRequest request) {
        Bounds.check("slug", slug);
        Bounds.check(request);
        return Mono.fromCallable(() -> {
                    if (request == null || request.authenticationTemplate() == null) {
                        throw InvalidInputException.decode("`authenticationTemplate` is required");
                    }
                    if (request.mode() != null && !request.mode().equals("merge") && !request.mode().equals("replace")) {
                        throw InvalidInputException.decode("`mode` must be \"merge\" or \"replace\", was \"" + request.mode() + "\"");
                    }
                    return authMethods(request.authenticationTemplate());
                })
                .flatMap(incoming -> integrations.find(slug)
                        .filter(integration -> integration.config() instanceof RemoteConfig)
                        .flatMap(integration -> {
                            RemoteConfig remote = (RemoteConfig) integration.config();
                            List<Map<String, Object>> declared = "replace".equals(request.mode()) ? AuthMethods.normalize(incoming)
                                    : AuthMethods.merge(remote.authenticationTemplate(), incoming);
                            return integrations.update(integration.withConfig(remote.withAuthenticationTemplate(declared), clock.instant()))
                                    .flatMap(updated -> pool.retire(slug).then(catalogs.changed(slug)))
                                    .thenReturn(declared);
                        })
                        .defaultIfEmpty(List.of()))
                .map(declared -> Map.<String, Object>of("authenticationTemplate", declared));
    }

    /** Connects to a remote endpoint once, without registering it, and says what is there. */
    @PostMapping("/probe")
    Mono<ProbeView> probe(@RequestBody ProbeRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> {
                    String endpoint = Inputs.requireText(request.endpoint(), "endpoint");
                    ServerConfigs.checkHttpUrl(endpoint);
                    return new RemoteServer("probe", URI.create(endpoint), RemoteServer.Transport.AUTO,
                            Inputs.headerMap(request.headers(), "headers"), Inputs.stringMap(request.queryParams(), "queryParams"));
                })
                .flatMap(server -> sessions.withSession(server, session -> session.listTools().map(catalog -> {
                            String serverName = session.serverInfo().map(info -> info.name()).orElse(null);
                            String name = serverName != null ? serverName : server.endpoint().getHost();
                            return new ProbeView(true, false, false, false, name, Slugs.fromText(name), catalog.tools().size(), serverName);
                        }))
                        .onErrorResume(error -> {
                            RemoteServerUnreachableException unreachable = new RemoteServerUnreachableException(error);
                            String host = server.endpoint().getHost();
                            if (!unreachable.requiresAuthentication()) {
                                return Mono.<ProbeView>error(unreachable);
                            }
                            // As Executor: a server whose challenge leads to OAuth metadata is an OAuth one, and the web
                            // UI then offers its sign-in (with dynamic registration when the metadata names an endpoint);
                            // without such metadata it asks for a bearer header.
                            return oauth.probe(server.endpoint().toString())
                                    .map(found -> new ProbeView(false, true, true, found.registrationEndpoint().isPresent(), host,
                                            Slugs.fromText(host), null, null))
                                    .onErrorResume(noOAuth -> Mono.just(new ProbeView(false, true, false, false, host,
                                            Slugs.fromText(host), null, null)));
                        }));
    }

    private Mono<Integration> find(String slug) {
        return integrations.find(slug).switchIfEmpty(Mono.error(() -> new IntegrationNotFoundException(slug)));
    }

    /** A new config keeps the auth methods declared before it: they are configured through their own route. */
    private static ServerConfig keepAuth(ServerConfig before, ServerConfig after) {
        return before instanceof RemoteConfig old && after instanceof RemoteConfig remote && remote.authenticationTemplate().isEmpty()
                ? remote.withAuthenticationTemplate(old.authenticationTemplate()) : after;
    }

    private static List<Map<String, Object>> authMethods(Object methods) {
        try {
            return AuthMethods.expand(methods);
        }
        catch (InvalidAuthMethodException ex) {
            throw InvalidInputException.decode(ex.getMessage());
        }
    }

    /**
     * Executor's declared auth methods of a new remote server: the given {@code authenticationTemplate}, else the
     * {@code auth} shorthand ({@code none}, {@code header} with {@code headerName} and {@code prefix}, {@code oauth2}),
     * else no authentication.
     */
    private static List<Map<String, Object>> declaredAuth(AddServerRequest request) {
        if (request.authenticationTemplate() != null) {
            return AuthMethods.normalize(authMethods(request.authenticationTemplate()));
        }
        if (request.auth() == null) {
            return AuthMethods.none();
        }
        if (!(request.auth() instanceof Map<?, ?> auth) || !(auth.get("kind") instanceof String kind)) {
            throw InvalidInputException.decode("`auth` must be { kind: \"none\" }, { kind: \"header\", headerName, prefix? } or { kind: \"oauth2\" }");
        }
        return switch (kind) {
            case "none", "oauth2" -> List.of(Map.of("slug", kind, "kind", kind));
            case "header" -> {
                if (!(auth.get("headerName") instanceof String header) || (auth.get("prefix") != null && !(auth.get("prefix") instanceof String))) {
                    throw InvalidInputException.decode("`auth.headerName` must be a string, and `auth.prefix` one if given");
                }
                Map<String, Object> placement = new LinkedHashMap<>();
                placement.put("carrier", "header");
                placement.put("name", header);
                if (auth.get("prefix") != null) {
                    placement.put("prefix", auth.get("prefix"));
                }
                Map<String, Object> method = new LinkedHashMap<>();
                method.put("slug", "header");
                method.put("kind", "apikey");
                method.put("placements", List.of(placement));
                yield List.of(method);
            }
            default -> throw InvalidInputException.decode("`auth.kind` must be \"none\", \"header\" or \"oauth2\", was \"" + kind + "\"");
        };
    }

    private Integration integration(AddServerRequest request) {
        String name = Inputs.requireText(request.name(), "name");
        ServerConfig parsed = checked(ServerConfigs.parse(request.config()));
        ServerConfig config = parsed instanceof RemoteConfig remote ? remote.withAuthenticationTemplate(declaredAuth(request)) : parsed;
        String slug = request.slug() == null || request.slug().isBlank() ? Slugs.fromName(name) : Slugs.check(request.slug());
        // Executor 1.5.9 describes a new server by its name; Tether keeps a description given beside it.
        String description = request.description() == null || request.description().isBlank() ? name : request.description();
        return new Integration(slug, name, description, config, clock.instant());
    }

    private ServerConfig checked(ServerConfig config) {
        if (config instanceof StdioConfig) {
            stdioGate.check();
        }
        return config;
    }

    private static ConfigRequest require(ConfigRequest request) {
        if (request == null || request.config() == null) {
            throw InvalidInputException.decode("`config` is required");
        }
        return request;
    }
}
