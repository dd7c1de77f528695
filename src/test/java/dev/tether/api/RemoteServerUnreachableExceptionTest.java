package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Whether a failed probe means "wants credentials": only an HTTP 401 or 403 the SDK reports says so. A refused
 * connection to a port whose number holds "401" once made a probe say the server wanted authentication.
 */
class RemoteServerUnreachableExceptionTest {

    @Test
    void aRefusedConnectionIsNotAnAuthorizationFailureWhateverThePort() {
        RuntimeException refused = new RuntimeException("cannot connect to MCP server 'probe' at "
                + "http://127.0.0.1:40137/mcp?tenant=403 over SSE: connection failed (java.net.ConnectException)");

        assertThat(new RemoteServerUnreachableException(refused).requiresAuthentication()).isFalse();
    }

    @Test
    void anHttp401Or403FromTheServerIs() {
        for (String reported : new String[] { "Sending message failed with a non-OK HTTP code: 401 - Unauthorized",
                "Unrecognized server error when connecting to SSE stream, status code: 403",
                "Failed to connect to SSE stream: 401" }) {
            RuntimeException failed = new RuntimeException("cannot connect to MCP server 'probe'", new RuntimeException(reported));

            assertThat(new RemoteServerUnreachableException(failed).requiresAuthentication()).as(reported).isTrue();
        }
    }
}
