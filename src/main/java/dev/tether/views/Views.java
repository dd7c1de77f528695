package dev.tether.views;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

import dev.tether.catalog.CatalogService.ConnectionTools;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;
import dev.tether.store.Integration;
import dev.tether.store.StoredTool;

import java.util.List;

import org.jspecify.annotations.Nullable;

/** The JSON shapes of Executor's API, built from stored state. Nothing secret is ever put in one. */
public final class Views {

    private Views() {
    }

    public record IntegrationView(String slug, String description, String kind, boolean canRemove, boolean canRefresh,
            List<Object> authMethods) {

        public static IntegrationView of(Integration integration) {
            return new IntegrationView(integration.slug(), integration.description(), "mcp", true, true, List.of());
        }
    }

    public record HealthView(String status, long checkedAt, @JsonInclude(JsonInclude.Include.NON_NULL) String detail) {

        public static HealthView of(HealthVerdict verdict) {
            return new HealthView(verdict.status(), verdict.checkedAt(), verdict.detail().orElse(null));
        }
    }

    public record ConnectionView(String owner, String name, String integration, String template, String provider,
            String address, String identityLabel, Double expiresAt, String oauthClient, String oauthClientOwner,
            String oauthScope, @JsonInclude(JsonInclude.Include.NON_NULL) HealthView lastHealth) {

        public static ConnectionView of(Connection connection) {
            return of(connection, connection.lastHealth().map(HealthView::of).orElse(null));
        }

        /** As the built-in {@code connections.list} answers: everything but the health verdict. */
        public static ConnectionView withoutHealth(Connection connection) {
            return of(connection, null);
        }

        private static ConnectionView of(Connection connection, @Nullable HealthView lastHealth) {
            ConnectionKey key = connection.key();
            return new ConnectionView(key.owner().wire(), key.name(), key.integration(), connection.template(), "executor",
                    key.address(), connection.identityLabel().orElse(null), null, null, null, null, lastHealth);
        }
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ToolView(String address, String owner, String integration, String connection, String name, String pluginId,
            String description, Boolean requiresApproval, String approvalDescription,
            @JsonProperty("static") Boolean builtIn) {

        /** As {@code GET /api/tools} answers; with annotations, whether a call needs approval and why. */
        public static List<ToolView> listed(ConnectionTools tools, boolean includeAnnotations) {
            return tools.tools().stream().map(tool -> includeAnnotations
                    ? of(tools.key(), tool, tool.requiresApproval(),
                            tool.requiresApproval() ? "The server marks " + tool.serverName() + " as destructive" : null)
                    : of(tools.key(), tool, null, null)).toList();
        }

        /** As the refresh route answers: the 1.5.9 shape, without annotations. */
        public static List<ToolView> refreshed(ConnectionTools tools) {
            return listed(tools, false);
        }

        /** A catalog tool as Executor lists it: its address and where it comes from, without annotations. */
        public static ToolView of(ConnectionKey key, StoredTool tool) {
            return of(key, tool, null, null);
        }

        private static ToolView of(ConnectionKey key, StoredTool tool, Boolean requiresApproval, String approvalDescription) {
            return new ToolView(key.toolAddress(tool.name()), key.owner().wire(), key.integration(), key.name(),
                    tool.name(), "mcp", tool.description(), requiresApproval, approvalDescription, null);
        }
    }
}
