package dev.tether.api;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.tether.session.SessionPool;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionStore;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationNotFoundException;
import dev.tether.store.IntegrationStore;
import dev.tether.store.Owner;
import dev.tether.store.StdioConfig;

/** Registers MCP servers, Executor's way of creating an MCP integration. */
@RestController
@RequestMapping("/api/mcp/servers")
final class McpServersController {

    /** Body of {@code POST /api/mcp/servers}: stdio fields; remote fields are recognised to refuse them clearly. */
    record AddServerRequest(String transport, String name, String description, String command, List<String> args,
            Map<String, String> env, String cwd, String slug, String endpoint) {
    }

    record ServerView(String slug, String description, String kind, boolean canRemove, boolean canRefresh,
            Map<String, Object> config) {
    }

    private static final String DEFAULT_CONNECTION = "default";

    private final IntegrationStore integrations;
    private final ConnectionStore connections;
    private final SessionPool sessions;
    private final Clock clock;

    McpServersController(IntegrationStore integrations, ConnectionStore connections, SessionPool sessions, Clock clock) {
        this.integrations = integrations;
        this.connections = connections;
        this.sessions = sessions;
        this.clock = clock;
    }

    @PostMapping
    Mono<Map<String, String>> add(@RequestBody AddServerRequest request) {
        return Mono.fromCallable(() -> integration(request))
                .flatMap(integrations::create)
                .flatMap(created -> connections.create(defaultConnection(created.slug()))
                        // No half-registered server: without its connection the integration goes too.
                        .onErrorResume(error -> integrations.delete(created.slug()).then(Mono.error(error)))
                        .thenReturn(Map.of("slug", created.slug())));
    }

    @GetMapping("/{slug}")
    Mono<ServerView> get(@PathVariable String slug) {
        return integrations.find(slug)
                .switchIfEmpty(Mono.error(() -> new IntegrationNotFoundException(slug)))
                .map(McpServersController::view);
    }

    @DeleteMapping("/{slug}")
    Mono<Map<String, Boolean>> remove(@PathVariable String slug) {
        return integrations.delete(slug)
                .flatMap(removed -> sessions.retire(slug).thenReturn(Map.of("removed", removed)));
    }

    private Integration integration(AddServerRequest request) {
        String transport = request.transport() == null ? "remote" : request.transport();
        if (!transport.equals("stdio")) {
            throw InvalidInputException.decode("`transport` \"" + transport
                    + "\" is not served by this Tether build; register the server with \"transport\": \"stdio\"");
        }
        String name = Inputs.requireText(request.name(), "name");
        String command = Inputs.requireText(request.command(), "command");
        List<String> args = request.args() == null ? List.of() : request.args();
        if (args.stream().anyMatch(arg -> arg == null)) {
            throw InvalidInputException.decode("`args` must be an array of strings");
        }
        if (request.env() != null && request.env().containsValue(null)) {
            throw InvalidInputException.decode("`env` must map variable names to strings");
        }
        String slug = request.slug() == null || request.slug().isBlank() ? Slugs.fromName(name) : Slugs.check(request.slug());
        return new Integration(slug, name, request.description(),
                new StdioConfig(command, args, request.env(), request.cwd()), clock.instant());
    }

    private static Connection defaultConnection(String slug) {
        return new Connection(new ConnectionKey(Owner.ORG, slug, DEFAULT_CONNECTION), "none", Optional.empty(), Optional.empty());
    }

    private static ServerView view(Integration integration) {
        StdioConfig config = integration.config();
        Map<String, Object> shown = new TreeMap<>();
        shown.put("transport", "stdio");
        shown.put("command", config.command());
        shown.put("args", config.args());
        // Values of env are secrets: show which variables are set, never what they hold.
        Map<String, String> maskedEnv = new TreeMap<>();
        config.env().keySet().forEach(key -> maskedEnv.put(key, "********"));
        shown.put("env", maskedEnv);
        shown.put("cwd", config.cwd());
        return new ServerView(integration.slug(), integration.description(), "mcp", true, true, shown);
    }
}
