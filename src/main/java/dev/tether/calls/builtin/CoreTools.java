package dev.tether.calls.builtin;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.catalog.CatalogService;
import dev.tether.identity.Principals;
import dev.tether.policy.Policies;
import dev.tether.session.SessionPool;
import dev.tether.store.ConnectionStore;
import dev.tether.store.IntegrationStore;
import dev.tether.store.Owner;
import dev.tether.store.Policy;
import dev.tether.store.PolicyAction;
import dev.tether.views.Views.ConnectionView;
import dev.tether.views.Views.IntegrationView;
import dev.tether.views.Views.RefreshedToolView;

/**
 * The {@code executor.coreTools.*} built-ins over Tether's integrations, connections and policies. Providers,
 * detection and OAuth are answered by their own features.
 */
@Component
final class CoreTools implements BuiltinHandlers {

    private static final String CORE = "executor.coreTools.";

    private final IntegrationStore integrations;
    private final ConnectionStore connections;
    private final CatalogService catalogs;
    private final SessionPool sessions;
    private final Policies policies;

    CoreTools(IntegrationStore integrations, ConnectionStore connections, CatalogService catalogs, SessionPool sessions, Policies policies) {
        this.integrations = integrations;
        this.connections = connections;
        this.catalogs = catalogs;
        this.sessions = sessions;
        this.policies = policies;
    }

    @Override
    public Map<String, BuiltinHandler> handlers() {
        Map<String, BuiltinHandler> handlers = new LinkedHashMap<>();
        handlers.put(CORE + "integrations.list", (tool, args) -> integrationsList());
        handlers.put(CORE + "connections.list", (tool, args) -> connectionsList(Arguments.of(tool, args)));
        handlers.put(CORE + "connections.remove", (tool, args) -> connectionsRemove(Arguments.of(tool, args)));
        handlers.put(CORE + "connections.refresh", (tool, args) -> connectionsRefresh(Arguments.of(tool, args)));
        handlers.put(CORE + "policies.list", (tool, args) -> policies.list().map(CoreTools::policyItem).collectList()
                .map(items -> Map.of("policies", items)));
        handlers.put(CORE + "policies.create", (tool, args) -> policiesCreate(Arguments.of(tool, args)));
        handlers.put(CORE + "policies.update", (tool, args) -> policiesUpdate(Arguments.of(tool, args)));
        handlers.put(CORE + "policies.remove", (tool, args) -> policiesRemove(Arguments.of(tool, args)));
        return handlers;
    }

    private Mono<Object> integrationsList() {
        return integrations.all().map(IntegrationView::of).startWith(IntegrationView.BUILT_IN)
                .map(view -> integrationItem(view.slug(), view.description(), view.kind(), view.canRemove(), view.canRefresh()))
                .collectList()
                .map(items -> Map.of("integrations", items));
    }

    private static Map<String, Object> integrationItem(String slug, String description, String kind, boolean canRemove, boolean canRefresh) {
        Map<String, Object> item = new LinkedHashMap<>();
        item.put("slug", slug);
        item.put("description", description == null ? "" : description);
        item.put("kind", kind);
        item.put("canRemove", canRemove);
        item.put("canRefresh", canRefresh);
        return item;
    }

    private Mono<Object> connectionsList(Arguments args) {
        Optional<String> integration = args.optionalText("integration");
        Optional<Owner> owner = args.optionalOwner("owner");
        return connections.all(integration, owner).map(ConnectionView::withoutHealth).collectList()
                .map(items -> Map.of("connections", items));
    }

    private Mono<Object> connectionsRemove(Arguments args) {
        return Principals.current().map(args::connectionKey).flatMap(key -> connections.delete(key)
                .flatMap(removed -> (removed ? sessions.retire(key) : Mono.<Void>empty()).thenReturn(Map.of("removed", removed))));
    }

    private Mono<Object> connectionsRefresh(Arguments args) {
        return Principals.current().map(args::connectionKey).flatMap(catalogs::refreshAtOwner).map(refreshed -> Map.of("tools",
                refreshed.tools().stream().map(tool -> RefreshedToolView.of(refreshed.key(), tool)).toList()));
    }

    private Mono<Object> policiesCreate(Arguments args) {
        Owner owner = requiredOwner(args);
        return policies.create(owner, args.text("pattern"), action(args.text("action")), Optional.empty()).map(CoreTools::policyItem);
    }

    private Mono<Object> policiesUpdate(Arguments args) {
        Owner owner = requiredOwner(args);
        return policies.update(args.text("id"), owner, args.optionalText("pattern"), args.optionalText("action").map(CoreTools::action),
                Optional.empty()).map(CoreTools::policyItem);
    }

    private Mono<Object> policiesRemove(Arguments args) {
        Owner owner = requiredOwner(args);
        return policies.delete(args.text("id"), owner).map(removed -> Map.of("removed", removed));
    }

    private static Owner requiredOwner(Arguments args) {
        return args.optionalOwner("owner").orElseThrow(() -> new InvalidToolArgumentsException("`owner` is required"));
    }

    private static PolicyAction action(String text) {
        return PolicyAction.parse(text).orElseThrow(() -> new InvalidToolArgumentsException(
                "`action` must be \"approve\", \"require_approval\" or \"block\", was \"" + text + "\""));
    }

    private static Object policyItem(Policy policy) {
        Map<String, Object> item = new LinkedHashMap<>();
        item.put("id", policy.id());
        item.put("owner", policy.owner().wire());
        item.put("pattern", policy.pattern());
        item.put("action", policy.action().wire());
        item.put("position", policy.position());
        return item;
    }
}
