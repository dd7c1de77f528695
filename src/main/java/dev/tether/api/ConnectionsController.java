package dev.tether.api;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.views.Views.ConnectionView;
import dev.tether.views.Views.HealthView;
import dev.tether.views.Views.RefreshedToolView;
import dev.tether.catalog.CatalogService;
import dev.tether.health.HealthEvent;
import dev.tether.health.HealthService;
import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.session.SessionPool;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionNames;
import dev.tether.store.ConnectionNotFoundException;
import dev.tether.store.ConnectionStore;
import dev.tether.store.IntegrationNotFoundException;
import dev.tether.store.IntegrationStore;
import dev.tether.api.input.Bounds;
import dev.tether.api.input.Inputs;
import dev.tether.api.input.InvalidInputException;

/** Connections: CRUD, health checks and catalog refresh. */
@RestController
@RequestMapping("/api/connections")
final class ConnectionsController {

    /** Body of {@code POST /api/connections}; exactly one of value, values and from. */
    public record CreateConnectionRequest(String owner, String name, String integration, String template, String identityLabel,
            String value, Map<String, String> values, Map<String, String> from) {
    }

    /** Body of {@code PATCH} on a connection: what to change; absent fields stay. */
    public record UpdateConnectionRequest(String identityLabel, String value, Map<String, String> values) {
    }

    /** Body of {@code POST /api/connections/validate}: credentials to try, not to save. */
    public record ValidateRequest(String integration, String owner, String template, String value, Map<String, String> values) {
    }

    /** Body of the batch health check: which connections; all when empty. */
    public record CheckAllRequest(@Nullable String integration, @Nullable String owner) {
    }

    record HealthEventView(String owner, String integration, String name, String address, HealthView health) {

        static HealthEventView of(HealthEvent event) {
            ConnectionKey key = event.key();
            return new HealthEventView(key.owner().wire(), key.integration(), key.name(), key.address(), HealthView.of(event.verdict()));
        }
    }

    static final long MAX_IF_STALE_MS = 86_400_000L;

    private final IntegrationStore integrations;
    private final ConnectionStore connections;
    private final HealthService health;
    private final CatalogService catalogs;
    private final SessionPool sessions;

    ConnectionsController(IntegrationStore integrations, ConnectionStore connections,
            HealthService health, CatalogService catalogs, SessionPool sessions) {
        this.sessions = sessions;
        this.integrations = integrations;
        this.connections = connections;
        this.health = health;
        this.catalogs = catalogs;
    }

    @GetMapping
    Flux<ConnectionView> list(@RequestParam(required = false) String integration, @RequestParam(required = false) String owner) {
        Bounds.check("integration", integration);
        Bounds.check("owner", owner);
        return Flux.defer(() -> connections.all(Inputs.optional(integration), Inputs.optionalOwner(owner))).map(ConnectionView::of);
    }

    @PostMapping
    Mono<ConnectionView> create(@RequestBody CreateConnectionRequest request) {
        Bounds.check(request);
        return Principals.current().map(caller -> connection(request, caller))
                .flatMap(connection -> connections.create(connection, credentialValues(request.template(), request.value(), request.values())))
                .flatMap(created -> catalogs.changed(created.key().integration()).thenReturn(created))
                .map(ConnectionView::of);
    }

    /** Changes a connection's label and, when given, its credential values; its session restarts with them. */
    @PatchMapping("/{owner}/{integration}/{name}")
    Mono<ConnectionView> update(@PathVariable String owner, @PathVariable String integration, @PathVariable String name,
            @RequestBody UpdateConnectionRequest request) {
        Bounds.check(request);
        return key(owner, integration, name).flatMap(key -> connections.find(key)
                .switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key)))
                .flatMap(existing -> {
                    if (request.value() != null && request.values() != null) {
                        return Mono.error(InvalidInputException.connection("give at most one of `value` and `values`"));
                    }
                    Optional<Map<String, String>> credentials = request.value() == null && request.values() == null ? Optional.empty()
                            : Optional.of(credentialValues(existing.template(), request.value(), request.values()));
                    Connection changed = new Connection(key, existing.template(),
                            request.identityLabel() == null ? existing.identityLabel() : Optional.of(request.identityLabel()),
                            existing.lastHealth(), existing.oauth());
                    return connections.update(changed, credentials)
                            .flatMap(updated -> sessions.retire(key).then(catalogs.changed(key.integration())).thenReturn(updated));
                }))
                .map(ConnectionView::of);
    }

    /** Checks credentials without saving them: a session of its own, ended after the check. */
    @PostMapping("/validate")
    Mono<HealthView> validate(@RequestBody ValidateRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> {
                    Inputs.requireText(request.integration(), "integration");
                    String template = request.template() == null ? "none" : request.template();
                    if (request.value() != null && request.values() != null) {
                        throw InvalidInputException.connection("give at most one of `value` and `values`");
                    }
                    return request.value() == null && request.values() == null ? Map.<String, String>of()
                            : credentialValues(template, request.value(), request.values());
                })
                .flatMap(credentials -> integrations.find(request.integration())
                        .switchIfEmpty(Mono.error(() -> new IntegrationNotFoundException(request.integration())))
                        .flatMap(integration -> health.validate(integration, credentials)))
                .map(HealthView::of);
    }

    @GetMapping("/{owner}/{integration}/{name}")
    Mono<ConnectionView> get(@PathVariable String owner, @PathVariable String integration, @PathVariable String name) {
        return key(owner, integration, name).flatMap(key -> connections.find(key)
                .switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key))))
                .map(ConnectionView::of);
    }

    @DeleteMapping("/{owner}/{integration}/{name}")
    Mono<Map<String, Boolean>> remove(@PathVariable String owner, @PathVariable String integration, @PathVariable String name) {
        return key(owner, integration, name).flatMap(key -> connections.delete(key)
                .flatMap(removed -> removed ? sessions.retire(key).then(catalogs.changed(key.integration())).thenReturn(Map.of("removed", true))
                        : Mono.error(new ConnectionNotFoundException(key))));
    }

    /** Checks the connection; a client that leaves mid-check tears down the server it started. */
    @PostMapping("/{owner}/{integration}/{name}/health")
    Mono<HealthView> health(@PathVariable String owner, @PathVariable String integration, @PathVariable String name,
            @RequestParam(required = false) String ifStaleMs) {
        Bounds.check("ifStaleMs", ifStaleMs);
        return key(owner, integration, name).flatMap(key -> health.check(key, ifStale(ifStaleMs))).map(HealthView::of);
    }

    /**
     * Tether's own: checks every matching connection as one generation, superseding a generation still
     * running, and streams this generation's verdicts. Leaving stops the observing, not the generation.
     */
    @PostMapping("/health")
    Flux<HealthEventView> checkAll(@RequestBody(required = false) CheckAllRequest request) {
        CheckAllRequest filter = request == null ? new CheckAllRequest(null, null) : Bounds.check(request);
        return Flux.defer(() -> health.checkAll(Inputs.optional(filter.integration()), Inputs.optionalOwner(filter.owner())))
                .map(HealthEventView::of);
    }

    /** Tether's own: every verdict as it is reached, so a UI can stop polling. */
    @GetMapping(value = "/health/events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    Flux<ServerSentEvent<HealthEventView>> events() {
        return health.events().map(event -> ServerSentEvent.builder(HealthEventView.of(event)).event("health").build());
    }

    @PostMapping("/{owner}/{integration}/{name}/refresh")
    Mono<List<RefreshedToolView>> refresh(@PathVariable String owner, @PathVariable String integration, @PathVariable String name) {
        return key(owner, integration, name).flatMap(catalogs::refresh).map(RefreshedToolView::of);
    }

    /** The connection the caller names: the organisation's, or for {@code user} its own. */
    private static Mono<ConnectionKey> key(String owner, String integration, String name) {
        return Principals.current().map(caller -> Inputs.connectionKey(owner, integration, name, caller));
    }

    private static Optional<Duration> ifStale(String ifStaleMs) {
        if (ifStaleMs == null || ifStaleMs.isEmpty()) {
            return Optional.empty();
        }
        try {
            long millis = Long.parseLong(ifStaleMs);
            if (millis < 0 || millis > MAX_IF_STALE_MS) {
                throw InvalidInputException.decode("`ifStaleMs` must be between 0 and " + MAX_IF_STALE_MS + ", was " + millis);
            }
            return Optional.of(Duration.ofMillis(millis));
        }
        catch (NumberFormatException ex) {
            throw InvalidInputException.decode("`ifStaleMs` must be a whole number of milliseconds, was \"" + ifStaleMs + "\"");
        }
    }

    private static Connection connection(CreateConnectionRequest request, Principal caller) {
        ConnectionKey key = ConnectionKey.of(Inputs.owner(request.owner(), "owner"),
                Inputs.requireText(request.integration(), "integration"),
                ConnectionNames.identifier(Inputs.requireText(request.name(), "name")), caller);
        String template = Inputs.requireText(request.template(), "template");
        long given = Stream.of(request.value(), request.values(), request.from()).filter(v -> v != null).count();
        if (given != 1) {
            throw InvalidInputException.connection("exactly one of `value`, `values` and `from` must be given, got " + given);
        }
        if (request.from() != null) {
            throw InvalidInputException.connection("`from`: credential providers are not available in Tether; give `value` or `values`");
        }
        if (request.values() != null && request.values().containsValue(null)) {
            throw InvalidInputException.connection("`values` must map variable names to strings");
        }
        return new Connection(key, template, Optional.ofNullable(request.identityLabel()), Optional.empty());
    }

    /**
     * A single {@code value} is kept under the template's name; for a stdio server the values become environment
     * variables of its child, for a remote one request headers.
     */
    private static Map<String, String> credentialValues(String template, String value, Map<String, String> values) {
        // They become environment variables or headers: names and values either can carry.
        return values != null ? Inputs.envMap(values, "values")
                : Inputs.envMap(Map.of(Inputs.requireText(template, "template"), value), "template");
    }
}
