package dev.tether.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpHeaders;
import java.util.List;
import java.util.Map;

import io.modelcontextprotocol.modern.client.transport.McpHttpStatusException;
import org.junit.jupiter.api.Test;

/** The SDK's 403 refusals, as its MCP 2026-07-28 transport reports them, read for the scope a server wants. */
class ScopeChallengeTest {

    private static McpHttpStatusException refused(int status, String... challenges) {
        return new McpHttpStatusException(URI.create("http://127.0.0.1:1/mcp"), status,
                HttpHeaders.of(Map.of("WWW-Authenticate", List.of(challenges)), (name, value) -> true), "{}");
    }

    @Test
    void anInsufficientScopeChallengeNamesTheScopeTheServerWants() {
        // as the TypeScript SDK's bearerAuthChallengeResponse writes it
        assertThat(ScopeChallenge.of(new RuntimeException("call failed", refused(403, "Bearer error=\"insufficient_scope\", "
                + "error_description=\"writing notes needs notes:write\", scope=\"mcp:tools notes:write\", "
                + "resource_metadata=\"http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp\""))))
                .contains("mcp:tools notes:write");
        assertThat(ScopeChallenge.of(refused(403, "Bearer error=\"insufficient_scope\""))).as("a challenge without scope").contains("");
    }

    @Test
    void otherRefusalsAreNotForWantOfScope() {
        assertThat(ScopeChallenge.of(refused(401, "Bearer error=\"invalid_token\", scope=\"mcp:tools\""))).isEmpty();
        assertThat(ScopeChallenge.of(refused(403, "Bearer error=\"invalid_token\""))).isEmpty();
        assertThat(ScopeChallenge.of(refused(403, "Basic realm=\"x\", error=\"insufficient_scope\""))).isEmpty();
        assertThat(ScopeChallenge.of(new IllegalStateException("HTTP 403 insufficient_scope"))).isEmpty();
    }

    @Test
    void aRefusalForWantOfScopeIsOneForCredentialsAndIsNotRenewed() {
        assertThat(RemoteServer.wantsCredentials(refused(403, "Bearer error=\"insufficient_scope\""))).isTrue();
        assertThat(RemoteServer.wantsCredentials(refused(401, "Bearer"))).isTrue();
        assertThat(RemoteServer.wantsCredentials(refused(500))).isFalse();
        assertThat(new InsufficientScopeException("notes", "notes:write", "mcp:tools notes:write"))
                .isInstanceOf(AuthorizationExpiredException.class)
                .hasMessage("MCP server 'notes' refused the request for want of scope notes:write (insufficient_scope): "
                        + "authorize the connection again, and Tether asks for scope \"mcp:tools notes:write\"");
    }
}
