package dev.tether.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

import dev.tether.calls.builtin.BuiltinTool;
import dev.tether.catalog.CatalogService.ConnectionTools;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;
import dev.tether.store.Integration;
import dev.tether.store.OAuthGrant;
import dev.tether.store.StoredTool;

import java.util.List;
import java.util.Optional;

/** The JSON shapes of Executor's API, built from stored state. Nothing secret is ever put in one. */
final class Views {

    private Views() {
    }

    record IntegrationView(String slug, String description, String kind, boolean canRemove, boolean canRefresh,
            List<Object> authMethods) {

        static IntegrationView of(Integration integration) {
            return new IntegrationView(integration.slug(), integration.description(), "mcp", true, true, List.of());
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
            Optional<OAuthGrant> oauth = connection.oauth();
            return new ConnectionView(key.owner().wire(), key.name(), key.integration(), connection.template(), "executor",
                    key.address(), connection.identityLabel().orElse(null),
                    oauth.flatMap(OAuthGrant::expiresAt).map(Long::doubleValue).orElse(null),
                    oauth.map(OAuthGrant::client).orElse(null), oauth.map(grant -> grant.clientOwner().wire()).orElse(null),
                    oauth.flatMap(OAuthGrant::scope).orElse(null), connection.lastHealth().map(HealthView::of).orElse(null));
        }
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record ToolView(String address, String owner, String integration, String connection, String name, String pluginId,
            String description, Boolean requiresApproval, String approvalDescription,
            @JsonProperty("static") Boolean builtIn) {

        /** A built-in as Executor lists it: under the {@code executor} integration, static. */
        static ToolView of(BuiltinTool tool) {
            return new ToolView(tool.path(), BuiltinTool.OWNER, BuiltinTool.INTEGRATION, BuiltinTool.CONNECTION, tool.name(),
                    tool.pluginId(), tool.description(), tool.requiresApproval(), null, true);
        }

        /** As {@code GET /api/tools} answers; with annotations, whether a call needs approval and why. */
        static List<ToolView> listed(ConnectionTools tools, boolean includeAnnotations) {
            return tools.tools().stream().map(tool -> includeAnnotations
                    ? of(tools.key(), tool, tool.requiresApproval(),
                            tool.requiresApproval() ? "The server marks " + tool.serverName() + " as destructive" : null)
                    : of(tools.key(), tool, null, null)).toList();
        }

        /** As the refresh route answers: the 1.5.9 shape, without annotations. */
        static List<ToolView> refreshed(ConnectionTools tools) {
            return listed(tools, false);
        }

        private static ToolView of(ConnectionKey key, StoredTool tool, Boolean requiresApproval, String approvalDescription) {
            return new ToolView(key.toolAddress(tool.name()), key.owner().wire(), key.integration(), key.name(),
                    tool.name(), "mcp", tool.description(), requiresApproval, approvalDescription, null);
        }
    }
}
