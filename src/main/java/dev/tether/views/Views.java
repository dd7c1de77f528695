package dev.tether.views;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

import dev.tether.catalog.CatalogService.ConnectionTools;
import dev.tether.httpauth.AuthMethods;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.Integration;
import dev.tether.store.OAuthGrant;
import dev.tether.store.RemoteConfig;
import dev.tether.store.StoredTool;

import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/** The JSON shapes of Executor's API, built from stored state. Nothing secret is ever put in one. */
public final class Views {

    private Views() {
    }

    /** An integration as Executor lists it; a remote server's declared auth methods and its URL to display. */
    public record IntegrationView(String slug, String description, String kind, boolean canRemove, boolean canRefresh,
            List<Object> authMethods, @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable String displayUrl) {

        /** Executor's built-in integration {@code executor}, first in every list; no one can remove or refresh it. */
        public static final IntegrationView BUILT_IN = new IntegrationView("executor", "Executor", "built-in", false, false,
                List.of(), null);

        public static IntegrationView of(Integration integration) {
            if (integration.config() instanceof RemoteConfig remote) {
                return new IntegrationView(integration.slug(), integration.description(), "mcp", true, true,
                        remote.authenticationTemplate().stream().<Object>map(method -> AuthMethods.describe(method, remote.endpoint()))
                                .toList(),
                        remote.endpoint());
            }
            if (integration.config() instanceof HttpSourceConfig source) {
                return new IntegrationView(integration.slug(), integration.description(), source.kind(), true, true, List.of(), null);
            }
            return new IntegrationView(integration.slug(), integration.description(), "mcp", true, true, List.of(), null);
        }
    }

    public record HealthView(String status, long checkedAt, @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable String detail) {

        public static HealthView of(HealthVerdict verdict) {
            return new HealthView(verdict.status(), verdict.checkedAt(), verdict.detail().orElse(null));
        }
    }

    public record ConnectionView(String owner, String name, String integration, String template, String provider,
            String address, @Nullable String identityLabel, @Nullable Double expiresAt, @Nullable String oauthClient,
            @Nullable String oauthClientOwner, @Nullable String oauthScope,
            @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable HealthView lastHealth) {

        public static ConnectionView of(Connection connection) {
            return of(connection, connection.lastHealth().map(HealthView::of).orElse(null));
        }

        /** As the built-in {@code connections.list} answers: everything but the health verdict. */
        public static ConnectionView withoutHealth(Connection connection) {
            return of(connection, null);
        }

        private static ConnectionView of(Connection connection, @Nullable HealthView lastHealth) {
            ConnectionKey key = connection.key();
            Optional<OAuthGrant> oauth = connection.oauth();
            return new ConnectionView(key.owner().wire(), key.name(), key.integration(), connection.template(), "file",
                    key.address(), connection.identityLabel().orElse(null),
                    oauth.flatMap(OAuthGrant::expiresAt).map(Long::doubleValue).orElse(null),
                    oauth.map(OAuthGrant::client).orElse(null), oauth.map(grant -> grant.clientOwner().wire()).orElse(null),
                    oauth.flatMap(OAuthGrant::scope).orElse(null), lastHealth);
        }
    }

    /**
     * A tool item as Executor lists it ({@code GET /api/tools}): Executor's annotations included, {@code null} where
     * it sends {@code null}; {@code static} is true for a built-in.
     */
    public record ToolView(String address, String owner, String integration, String connection, String name, String pluginId,
            String description, @Nullable Boolean mayElicit, @Nullable Boolean requiresApproval, @Nullable String approvalDescription,
            @JsonProperty("static") @Nullable Boolean builtIn) {

        /**
         * As {@code GET /api/tools} answers, with or without {@code includeAnnotations} (Executor 1.5.9 ignores it): a
         * tool the server marks destructive needs approval, described by its name.
         */
        public static List<ToolView> listed(ConnectionTools tools) {
            return tools.tools().stream().map(tool -> new ToolView(tools.key().toolAddress(tool.name()), tools.key().owner().wire(),
                    tools.key().integration(), tools.key().name(), tool.name(), Views.pluginId(tool), tool.description(), null,
                    tool.requiresApproval(), tool.requiresApproval() ? approvalDescription(tool) : null, null)).toList();
        }

        /** An HTTP source's own wording ({@code DELETE /pets/{id}}, {@code mutation addBook}); an MCP tool's name. */
        private static String approvalDescription(StoredTool tool) {
            return tool.approvalDescription() != null ? tool.approvalDescription() : tool.serverName();
        }
    }

    /** A tool item of the refresh route and the built-in {@code connections.refresh}: the 1.5.9 shape, without annotations. */
    public record RefreshedToolView(String address, String owner, String integration, String connection, String name,
            String pluginId, String description) {

        public static List<RefreshedToolView> of(ConnectionTools tools) {
            return tools.tools().stream().map(tool -> of(tools.key(), tool)).toList();
        }

        public static RefreshedToolView of(ConnectionKey key, StoredTool tool) {
            return new RefreshedToolView(key.toolAddress(tool.name()), key.owner().wire(), key.integration(), key.name(), tool.name(),
                    Views.pluginId(tool), tool.description());
        }
    }

    /** Executor's plugin of a stored tool: {@code mcp}, or the HTTP source's kind. */
    static String pluginId(StoredTool tool) {
        return tool.pluginId() == null ? "mcp" : tool.pluginId();
    }
}
