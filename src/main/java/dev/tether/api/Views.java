package dev.tether.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

import dev.tether.calls.builtin.BuiltinTool;
import dev.tether.catalog.CatalogService.ConnectionTools;
import dev.tether.httpauth.AuthMethods;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;
import dev.tether.store.Integration;
import dev.tether.store.RemoteConfig;
import dev.tether.store.StoredTool;

import java.util.List;

/** The JSON shapes of Executor's API, built from stored state. Nothing secret is ever put in one. */
final class Views {

    private Views() {
    }

    /** An integration as Executor lists it; a remote server's declared auth methods and its URL to display. */
    record IntegrationView(String slug, String description, String kind, boolean canRemove, boolean canRefresh,
            List<Object> authMethods, @JsonInclude(JsonInclude.Include.NON_NULL) String displayUrl) {

        /** Executor's built-in integration, first in every list, which no one can remove or refresh. */
        static final IntegrationView BUILT_IN = new IntegrationView(BuiltinTool.INTEGRATION, "Executor", "built-in", false, false,
                List.of(), null);

        static IntegrationView of(Integration integration) {
            if (integration.config() instanceof RemoteConfig remote) {
                return new IntegrationView(integration.slug(), integration.description(), "mcp", true, true,
                        remote.authenticationTemplate().stream().<Object>map(method -> AuthMethods.describe(method, remote.endpoint())).toList(),
                        remote.endpoint());
            }
            return new IntegrationView(integration.slug(), integration.description(), "mcp", true, true, List.of(), null);
        }
    }

    record HealthView(String status, long checkedAt, @JsonInclude(JsonInclude.Include.NON_NULL) String detail) {

        static HealthView of(HealthVerdict verdict) {
            return new HealthView(verdict.status(), verdict.checkedAt(), verdict.detail().orElse(null));
        }
    }

    record ConnectionView(String owner, String name, String integration, String template, String provider,
            String address, String identityLabel, Double expiresAt, String oauthClient, String oauthClientOwner,
            String oauthScope, @JsonInclude(JsonInclude.Include.NON_NULL) HealthView lastHealth) {

        static ConnectionView of(Connection connection) {
            ConnectionKey key = connection.key();
            return new ConnectionView(key.owner().wire(), key.name(), key.integration(), connection.template(), "executor",
                    key.address(), connection.identityLabel().orElse(null), null, null, null, null,
                    connection.lastHealth().map(HealthView::of).orElse(null));
        }
    }

    /**
     * A tool item as Executor answers it: the refresh route's items carry only the first seven fields; listings add
     * Executor's annotations, {@code null} included where it sends {@code null}.
     */
    record ToolView(String address, String owner, String integration, String connection, String name, String pluginId,
            String description, Boolean mayElicit, Boolean requiresApproval, String approvalDescription,
            @JsonProperty("static") Boolean builtIn) {

        /** A built-in as Executor lists it: under the {@code executor} integration, static. */
        static ToolView of(BuiltinTool tool) {
            return new ToolView(tool.path(), BuiltinTool.OWNER, BuiltinTool.INTEGRATION, BuiltinTool.CONNECTION, tool.name(),
                    tool.pluginId(), tool.description(), null, tool.requiresApproval(), tool.approvalDescription(), true);
        }

        /**
         * As {@code GET /api/tools} answers, with or without {@code includeAnnotations} (Executor 1.5.9 ignores it):
         * a tool the server marks destructive needs approval, described by its name.
         */
        static List<ToolView> listed(ConnectionTools tools) {
            return tools.tools().stream().map(tool -> of(tools.key(), tool, tool.requiresApproval(),
                    tool.requiresApproval() ? tool.serverName() : null)).toList();
        }

        private static ToolView of(ConnectionKey key, StoredTool tool, Boolean requiresApproval, String approvalDescription) {
            return new ToolView(key.toolAddress(tool.name()), key.owner().wire(), key.integration(), key.name(),
                    tool.name(), "mcp", tool.description(), null, requiresApproval, approvalDescription, null);
        }
    }

    /** A tool item of the refresh route: the 1.5.9 shape, without annotations. */
    record RefreshedToolView(String address, String owner, String integration, String connection, String name, String pluginId,
            String description) {

        static List<RefreshedToolView> of(ConnectionTools tools) {
            return tools.tools().stream().map(tool -> new RefreshedToolView(tools.key().toolAddress(tool.name()),
                    tools.key().owner().wire(), tools.key().integration(), tools.key().name(), tool.name(), "mcp",
                    tool.description())).toList();
        }
    }
}
