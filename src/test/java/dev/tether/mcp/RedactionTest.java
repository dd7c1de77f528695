package dev.tether.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

/** Values Tether handed a server are taken out of what is quoted from it, raw or URL-encoded. */
class RedactionTest {

    @Test
    void headerAndQueryValuesAreTakenOutRawAndUrlEncoded() {
        RemoteServer remote = new RemoteServer("r", URI.create("http://127.0.0.1:1/mcp"), RemoteServer.Transport.AUTO,
                Map.of("Authorization", "Bearer abc.def"), Map.of("key", "k e/y+1"));
        Redaction redaction = Redaction.of(remote);
        String quoted = "GET http://127.0.0.1:1/mcp?key=k+e%2Fy%2B1 failed; header Bearer abc.def; raw k e/y+1; other k%20e%2Fy%2B1";
        assertThat(redaction.apply(quoted)).isEqualTo("GET http://127.0.0.1:1/mcp?key=*** failed; header ***; raw ***; other ***");
        assertThat(remote.toString()).doesNotContain("abc.def").doesNotContain("k e/y+1");
    }

    @Test
    void shortValuesAreLeftAloneSoExitCodesStayReadable() {
        Redaction redaction = Redaction.of(new StdioServer("s", "node", List.of(), Map.of("DEBUG", "1", "TOKEN", "s3cr3t"),
                Optional.empty()));
        assertThat(redaction.apply("exited with code 1: token s3cr3t")).isEqualTo("exited with code 1: token ***");
    }

    @Test
    void aCauseThatQuotesASecretIsDropped() {
        Redaction redaction = Redaction.of(List.of("s3cr3t-value"));
        McpServerException failure = McpServerException.redacted("s", "failed: s3cr3t-value",
                new IllegalStateException("boom s3cr3t-value"), redaction);
        assertThat(failure.getMessage()).isEqualTo("failed: ***");
        assertThat(failure.getCause()).isNull();
        McpServerException clean = McpServerException.redacted("s", "failed", new IllegalStateException("boom"), redaction);
        assertThat(clean.getCause()).isNotNull();
    }

    @Test
    void theCredentialOfAHeaderWithASchemeIsTakenOutAloneAndAsJsonQuotesIt() {
        String basic = java.util.Base64.getEncoder().encodeToString("alice:pa/ss\"word".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        Redaction redaction = Redaction.of(List.of("Bearer tok/en-123", "Basic " + basic));
        assertThat(redaction.apply("{\"token\":\"tok\\/en-123\",\"raw\":\"tok/en-123\",\"basic\":\"" + basic
                + "\",\"password\":\"pa\\/ss\\\"word\",\"plain\":\"pa/ss\"word\"}"))
                .doesNotContain("tok/en-123", "tok\\/en-123", basic, "pa/ss\"word", "pa\\/ss\\\"word")
                .contains("\"token\":\"***\"");
        assertThat(redaction.apply("Bearer is a scheme, not a secret")).isEqualTo("Bearer is a scheme, not a secret");
    }
}
