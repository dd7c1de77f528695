package dev.tether.oauth;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;

import dev.tether.store.Connection;
import dev.tether.store.OAuthClient;
import dev.tether.views.Views.ConnectionView;

/** What Executor's OAuth routes and the built-ins that are their twins answer, written once for both. */
public final class OAuthViews {

    private OAuthViews() {
    }

    /** The answer of {@code POST /api/oauth/start}: connected at once, or where to send the browser. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record StartView(String status, @Nullable ConnectionView connection, @Nullable String authorizationUrl, @Nullable String state) {

        public static StartView of(OAuthFlows.Started started) {
            return started instanceof OAuthFlows.Connected connected ? new StartView("connected", OAuthViews.connection(connected.connection()), null, null)
                    : new StartView("redirect", null, ((OAuthFlows.Redirect) started).authorizationUrl(), ((OAuthFlows.Redirect) started).state());
        }
    }

    /** An OAuth client as {@code GET /api/oauth/clients} lists it. */
    public record ClientView(String owner, String slug, String grant, String authorizationUrl, String tokenUrl, @Nullable String resource,
            String clientId, @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable Map<String, Object> origin) {

        public static ClientView of(OAuthClient client) {
            Map<String, Object> origin = new LinkedHashMap<>();
            if (client.dynamic()) {
                origin.put("kind", "dynamic_client_registration");
                origin.put("integration", client.originIntegration().orElse(null));
            }
            else {
                origin.put("kind", "manual");
            }
            return new ClientView(client.owner().wire(), client.slug(), client.grant(), client.authorizationUrl(), client.tokenUrl(),
                    client.resource().orElse(null), client.clientId(), origin);
        }

        /** As Executor's built-in lists a client: without its origin. */
        public ClientView withoutOrigin() {
            return new ClientView(owner, slug, grant, authorizationUrl, tokenUrl, resource, clientId, null);
        }
    }

    /** What {@code POST /api/oauth/probe} read of a server's metadata. */
    public record ProbeView(String authorizationUrl, String tokenUrl, @Nullable String resource, @Nullable List<String> scopesSupported,
            @Nullable String registrationEndpoint, @Nullable List<String> tokenEndpointAuthMethodsSupported) {

        public static ProbeView of(ProbeResult probe) {
            return new ProbeView(probe.authorizationUrl(), probe.tokenUrl(), probe.resource().orElse(null),
                    probe.scopesSupported().orElse(null), probe.registrationEndpoint().orElse(null),
                    probe.tokenEndpointAuthMethodsSupported().orElse(null));
        }
    }

    /** As Executor answers a connection from the OAuth routes: without {@code lastHealth}. */
    public static ConnectionView connection(Connection connection) {
        return ConnectionView.withoutHealth(connection);
    }
}
