package dev.tether.calls;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.http.AuthTemplates;
import dev.tether.http.InvalidTemplateException;
import dev.tether.http.ToolResults;
import dev.tether.mcp.AuthorizationExpiredException;
import dev.tether.mcp.BearerToken;
import dev.tether.session.BearerTokens;
import dev.tether.store.Connection;
import dev.tether.store.ConnectionKey;
import dev.tether.store.ConnectionNotFoundException;
import dev.tether.store.ConnectionStore;
import dev.tether.store.CredentialStore;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.Integration;
import dev.tether.store.IntegrationStore;
import dev.tether.store.StoredTool;

/** Calls of tools of HTTP sources: each is handed to the {@link SourceTools} of its integration's kind. */
@Component
public final class SourceCalls {

    private final IntegrationStore integrations;
    private final ConnectionStore connections;
    private final CredentialStore credentials;
    private final List<SourceTools> sources;
    private final BearerTokens bearers;

    public SourceCalls(IntegrationStore integrations, ConnectionStore connections, CredentialStore credentials,
            List<SourceTools> sources, BearerTokens bearers) {
        this.integrations = integrations;
        this.connections = connections;
        this.credentials = credentials;
        this.sources = List.copyOf(sources);
        this.bearers = bearers;
    }

    /** The integration of the connection when it is an HTTP source; empty for an MCP server. */
    Mono<Integration> source(ConnectionKey key) {
        return integrations.find(key.integration()).filter(integration -> integration.config() instanceof HttpSourceConfig);
    }

    /** The tool's answer as Executor's {@code ToolResult}; see {@link SourceTools#invoke}. */
    Mono<Map<String, Object>> invoke(Integration integration, ConnectionKey key, StoredTool tool, Map<String, Object> arguments) {
        String kind = ((HttpSourceConfig) integration.config()).kind();
        SourceTools tools = sources.stream().filter(s -> s.kind().equals(kind)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no tools for sources of kind " + kind));
        return connections.find(key)
                .switchIfEmpty(Mono.error(() -> new ConnectionNotFoundException(key)))
                .zipWith(credentials.credentials(key).defaultIfEmpty(Map.of()))
                .flatMap(found -> {
                    HttpSourceConfig config = (HttpSourceConfig) integration.config();
                    Map<String, Object> operation = config.operations().get(tool.name());
                    if (operation == null) {
                        return Mono.just(ToolResults.fail(kind + "_operation_missing", "No " + kind + " operation found for tool \""
                                + tool.name() + "\" on \"" + integration.slug() + "\"", null, null));
                    }
                    AuthTemplates.Rendered auth;
                    try {
                        auth = AuthTemplates.render(config.authenticationTemplate(), found.getT1().template(), found.getT2(), integration.slug());
                    }
                    catch (InvalidTemplateException refused) {
                        // Executor answers these as the tool's failure (connection_value_missing, ...), not as an error.
                        return Mono.just(ToolResults.fail(refused.code(), refused.getMessage(), null, null));
                    }
                    if (auth.bearer() == null) {
                        return tools.invoke(integration, operation, auth, found.getT1(), arguments);
                    }
                    return withBearer(integration, found.getT1(), auth,
                            rendered -> tools.invoke(integration, operation, rendered, found.getT1(), arguments));
                });
    }

    /**
     * A call with the connection's OAuth access token: refreshed first when it is about to expire; when the server
     * refuses it with 401 before then (revoked, rotated), renewed once and the call made once more.
     */
    private Mono<Map<String, Object>> withBearer(Integration integration, Connection connection, AuthTemplates.Rendered auth,
            Function<AuthTemplates.Rendered, Mono<Map<String, Object>>> call) {
        Optional<BearerToken> bearer = bearers.bearer(connection);
        if (bearer.isEmpty()) {
            return Mono.just(ToolResults.fail("connection_value_missing", "The connection \"" + connection.key().name() + "\" of \""
                    + integration.slug() + "\" was not made by an OAuth flow: connect it through oauth.start.", null, null));
        }
        BearerToken source = bearer.get();
        return source.token()
                .flatMap(token -> call.apply(auth.withToken(token))
                        .flatMap(answer -> unauthorized(answer)
                                ? source.renewed(token).flatMap(renewed -> call.apply(auth.withToken(renewed)))
                                : Mono.just(answer)))
                .onErrorResume(AuthorizationExpiredException.class, expired -> Mono.just(ToolResults.fail("connection_rejected",
                        expired.getMessage(), null, null)));
    }

    private static boolean unauthorized(Map<String, Object> answer) {
        return answer.get("error") instanceof Map<?, ?> error && Integer.valueOf(401).equals(error.get("status"));
    }
}
