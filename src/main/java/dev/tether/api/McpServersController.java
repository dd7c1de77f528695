package dev.tether.api;

import java.net.URI;
import java.time.Clock;
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
import reactor.core.publisher.Mono;

import dev.tether.api.input.ServerConfigs.ConfigInput;
import dev.tether.catalog.CatalogService;
import dev.tether.mcp.McpSessions;
import dev.tether.mcp.RemoteServer;
import dev.tether.session.SessionPool;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationNotFoundException;
import dev.tether.store.IntegrationStore;
import dev.tether.store.ServerConfig;
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
            Map<String, String> queryParams, Map<String, String> headers) {

        ConfigInput config() {
            return new ConfigInput(transport, command, args, env, cwd, endpoint, remoteTransport, queryParams, headers);
        }
    }

    public record ConfigRequest(ConfigInput config) {
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
            boolean supportsDynamicRegistration, String name, String slug, Integer toolCount, String serverName) {
    }

    private final IntegrationStore integrations;
    private final SessionPool pool;
    private final CatalogService catalogs;
    private final McpSessions sessions;
    private final StdioGate stdioGate;
    private final Clock clock;

    McpServersController(IntegrationStore integrations, SessionPool pool, CatalogService catalogs, McpSessions sessions,
            StdioGate stdioGate, Clock clock) {
        this.integrations = integrations;
        this.pool = pool;
        this.catalogs = catalogs;
        this.sessions = sessions;
        this.stdioGate = stdioGate;
        this.clock = clock;
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
                .flatMap(config -> find(slug).flatMap(existing -> integrations.update(existing.withConfig(config, clock.instant()))))
                .flatMap(updated -> pool.retire(slug).then(catalogs.changed(slug)).thenReturn(Map.<String, Object>of("config", ServerConfigs.view(updated.config()))));
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
                            return unreachable.requiresAuthentication()
                                    ? Mono.just(new ProbeView(false, true, false, false, host, Slugs.fromText(host), null, null))
                                    : Mono.error(unreachable);
                        }));
    }

    private Mono<Integration> find(String slug) {
        return integrations.find(slug).switchIfEmpty(Mono.error(() -> new IntegrationNotFoundException(slug)));
    }

    private Integration integration(AddServerRequest request) {
        String name = Inputs.requireText(request.name(), "name");
        ServerConfig config = checked(ServerConfigs.parse(request.config()));
        String slug = request.slug() == null || request.slug().isBlank() ? Slugs.fromName(name) : Slugs.check(request.slug());
        return new Integration(slug, name, request.description(), config, clock.instant());
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
