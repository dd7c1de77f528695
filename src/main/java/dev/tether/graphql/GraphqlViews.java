package dev.tether.graphql;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.tether.api.input.ServerConfigs;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.Integration;

/** What Executor's GraphQL routes and the built-ins that are their twins answer of an integration. */
public final class GraphqlViews {

    private GraphqlViews() {
    }

    /** A GraphQL integration's config as Executor 1.5.9 answers it: headers and query values masked, left out when none. */
    public static Map<String, Object> config(Integration integration) {
        HttpSourceConfig config = (HttpSourceConfig) integration.config();
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("endpoint", config.settings().get("endpoint"));
        view.put("name", config.settings().get("name"));
        if (!config.headers().isEmpty()) {
            view.put("headers", ServerConfigs.masked(config.headers()));
        }
        if (!config.queryParams().isEmpty()) {
            view.put("queryParams", ServerConfigs.masked(config.queryParams()));
        }
        view.put("authenticationTemplate", config.settings().getOrDefault("authenticationTemplate", List.of()));
        return view;
    }
}
