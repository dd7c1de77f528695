package dev.tether.api;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.api.Views.ConnectionView;
import dev.tether.api.Views.HealthView;
import dev.tether.api.Views.ToolView;
import dev.tether.catalog.CatalogService;
import dev.tether.health.HealthEvent;
import dev.tether.health.HealthService;
import dev.tether.session.SessionPool;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionNotFoundException;
import dev.tether.store.ConnectionStore;
import dev.tether.store.CredentialStore;
import dev.tether.store.IntegrationNotFoundException;
import dev.tether.store.IntegrationStore;

/** Connections: CRUD, health checks and catalog refresh. */
@RestController
@RequestMapping("/api/connections")
final class ConnectionsController {

    /** Body of {@code POST /api/connections}; exactly one of value, values and from. */
    record CreateConnectionRequest(String owner, String name, String integration, String template, String identityLabel,
            String value, Map<String, String> values, Map<String, String> from) {
    }

    /** Body of the batch health check: which connections; all when empty. */
    record CheckAllRequest(String integration, String owner) {
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
    private final CredentialStore credentials;
    private final HealthService health;
    private final CatalogService catalogs;
    private final SessionPool sessions;

    ConnectionsController(IntegrationStore integrations, ConnectionStore connections, CredentialStore credentials,
            HealthService health, CatalogService catalogs, SessionPool sessions) {
        this.sessions = sessions;
        this.integrations = integrations;
        this.connections = connections;
        this.credentials = credentials;
        this.health = health;
        this.catalogs = catalogs;
    }

    @GetMapping
    Flux<ConnectionView> list(@RequestParam(required = false) String integration, @RequestParam(required = false) String owner) {
        return Flux.defer(() -> connections.all(Inputs.optional(integration), Inputs.optionalOwner(owner))).map(ConnectionView::of);
    }

    @PostMapping
    Mono<ConnectionView> create(@RequestBody CreateConnectionRequest request) {
        return Mono.fromCallable(() -> connection(request))
                .flatMap(connection -> integrations.find(connection.key().integration())
                        .switchIfEmpty(Mono.error(() -> new IntegrationNotFoundException(connection.key().integration())))
                        .then(connections.create(connection)))
                .flatMap(created -> credentials.saveCredentials(created.key(), credentialValues(request))
                        // No connection without its credentials: undo the create when they cannot be kept.
                        .onErrorResume(error -> connections.delete(created.key()).then(Mono.error(error)))
                        .thenReturn(ConnectionView.of(created)));
    }

    @GetMapping("/{owner}/{integration}/{name}")
    Mono<ConnectionView> get(@PathVariable String owner, @PathVariable String integration, @PathVariable String name) {
        ConnectionKey key = Inputs.connectionKey(owner, integration, name);
        return connections.find(key)
                .switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key)))
                .map(ConnectionView::of);
    }

    @DeleteMapping("/{owner}/{integration}/{name}")
    Mono<Map<String, Boolean>> remove(@PathVariable String owner, @PathVariable String integration, @PathVariable String name) {
        ConnectionKey key = Inputs.connectionKey(owner, integration, name);
        return connections.delete(key).flatMap(removed -> sessions.retire(key).thenReturn(Map.of("removed", removed)));
    }

    /** Checks the connection; a client that leaves mid-check tears down the server it started. */
    @PostMapping("/{owner}/{integration}/{name}/health")
    Mono<HealthView> health(@PathVariable String owner, @PathVariable String integration, @PathVariable String name,
            @RequestParam(required = false) String ifStaleMs) {
        ConnectionKey key = Inputs.connectionKey(owner, integration, name);
        return health.check(key, ifStale(ifStaleMs)).map(HealthView::of);
    }

    /**
     * Tether's own: checks every matching connection as one generation, superseding a generation still
     * running, and streams this generation's verdicts. Leaving stops the observing, not the generation.
     */
    @PostMapping("/health")
    Flux<HealthEventView> checkAll(@RequestBody(required = false) CheckAllRequest request) {
        CheckAllRequest filter = request == null ? new CheckAllRequest(null, null) : request;
        return Flux.defer(() -> health.checkAll(Inputs.optional(filter.integration()), Inputs.optionalOwner(filter.owner())))
                .map(HealthEventView::of);
    }

    /** Tether's own: every verdict as it is reached, so a UI can stop polling. */
    @GetMapping(value = "/health/events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    Flux<ServerSentEvent<HealthEventView>> events() {
        return health.events().map(event -> ServerSentEvent.builder(HealthEventView.of(event)).event("health").build());
    }

    @PostMapping("/{owner}/{integration}/{name}/refresh")
    Mono<List<ToolView>> refresh(@PathVariable String owner, @PathVariable String integration, @PathVariable String name) {
        ConnectionKey key = Inputs.connectionKey(owner, integration, name);
        return catalogs.refresh(key).map(ToolView::refreshed);
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

    private static Connection connection(CreateConnectionRequest request) {
        ConnectionKey key = new ConnectionKey(Inputs.owner(request.owner(), "owner"),
                Inputs.requireText(request.integration(), "integration"), Inputs.requireText(request.name(), "name"));
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

    /** A single {@code value} is kept under the template's name; for stdio servers both become env variables. */
    private static Map<String, String> credentialValues(CreateConnectionRequest request) {
        return request.values() != null ? request.values() : Map.of(request.template(), request.value());
    }
}
