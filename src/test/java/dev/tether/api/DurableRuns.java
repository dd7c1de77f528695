package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.JsonNode;

/**
 * What the durable execution tests share: code that meets every kind of event its journal records, the fixture's log
 * of the calls it answered ({@code --calls=FILE}), and an agent over {@code /mcp} on plain HTTP.
 */
final class DurableRuns {

    /**
     * Twenty calls to {@code %1$s.echo} (twelve of them four at a time, in {@code Promise.all}) whose arguments carry what
     * the code read from the clock and from randomness, each also logged; then {@code %1$s.delete_everything}, which
     * waits for approval. Format with the connection's tools ({@code tools.fx.org.default}).
     */
    static final String TWENTY_CALLS = """
            let previous = '';
            const step = async (i) => {
              const line = JSON.stringify({ i, now: Date.now(), date: new Date().toISOString(), random: Math.random(), previous });
              console.log(line);
              const answer = await %1$s.echo({ text: line });
              return answer.data.content[0].text;
            };
            for (let i = 0; i < 8; i++) previous = await step(i);
            for (let round = 0; round < 3; round++) {
              const answers = await Promise.all([0, 1, 2, 3].map((k) => step(8 + 4 * round + k)));
              previous = answers.join('|').length + ':' + Math.random();
            }
            const approved = await %1$s.delete_everything({ token: previous });
            console.log('approved', approved.data.content[0].text);
            return previous;
            """;

    private DurableRuns() {
    }

    /** Each call the fixture answered, {@code {name, arguments}}, in order; none before the first. */
    static List<JsonNode> calls(Path log) throws IOException {
        return Files.exists(log) ? Files.readAllLines(log).stream().map(TetherClient.JSON::readTree).toList() : List.of();
    }

    /** Each call the fixture answered as {@code <tool> <text>} ({@code <tool>} alone without a text). */
    static List<String> received(Path log) throws IOException {
        return calls(log).stream()
                .map(call -> (call.path("name").asString() + " " + call.path("arguments").path("text").asString("")).strip())
                .toList();
    }

    /** The texts of the echo calls the fixture answered, in order. */
    static List<String> echoed(Path log) throws IOException {
        return calls(log).stream().filter(call -> call.path("name").asString().equals("echo"))
                .map(call -> call.path("arguments").path("text").asString()).toList();
    }

    /** An agent over {@code /mcp} at {@code url} (its query names the elicitation mode), each request on a connection of its own. */
    record Agent(String url, String token) {

        String initialize() throws Exception {
            HttpResponse<String> opened = send(null, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                    + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"durable\",\"version\":\"1\"}}}");
            assertThat(opened.statusCode()).as(opened.body()).isEqualTo(200);
            return opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
        }

        /** A session on replica {@code instance}, behind a round-robin balancer that lands each initialize on the next replica. */
        String initializeOn(String instance) throws Exception {
            for (int attempt = 0; attempt < 4; attempt++) {
                String session = initialize();
                if (session.startsWith(instance + ".")) {
                    return session;
                }
            }
            throw new AssertionError("no session of 4 landed on " + instance);
        }

        JsonNode call(String session, String tool, Map<String, Object> arguments) throws Exception {
            HttpResponse<String> answer = send(session, TetherClient.JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "id", 1,
                    "method", "tools/call", "params", Map.of("name", tool, "arguments", arguments))));
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            return TetherClient.JSON.readTree(answer.body());
        }

        HttpResponse<String> send(String session, String body) throws Exception {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url))
                    .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream").timeout(TetherClient.CALL_BOUND)
                    .POST(HttpRequest.BodyPublishers.ofString(body));
            if (session != null) {
                request.header("Mcp-Session-Id", session);
            }
            return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    /**
     * An agent of MCP 2026-07-28 at {@code url}: every request self-describing (its version and capabilities in
     * {@code _meta}, the routing headers), no session, a form question answered by a retry with {@code inputResponses}
     * and the {@code requestState} it was given.
     */
    record StatelessAgent(String url, String token) {

        static final String MODERN = "2026-07-28";

        JsonNode call(String tool, Map<String, Object> arguments) throws Exception {
            return send(tool, new java.util.LinkedHashMap<>(Map.of("name", tool, "arguments", arguments)));
        }

        /** Calls {@code tool} again with the answer to every question of {@code asked} and the state it carried. */
        JsonNode retry(String tool, Map<String, Object> arguments, JsonNode asked, Map<String, Object> answer) throws Exception {
            Map<String, Object> answers = new java.util.LinkedHashMap<>();
            asked.path("result").path("inputRequests").propertyNames().forEach(key -> answers.put(key, answer));
            Map<String, Object> params = new java.util.LinkedHashMap<>(Map.of("name", tool, "arguments", arguments));
            params.put("inputResponses", answers);
            params.put("requestState", asked.path("result").path("requestState").asString());
            return send(tool, params);
        }

        private JsonNode send(String tool, Map<String, Object> params) throws Exception {
            params.put("_meta", Map.of("io.modelcontextprotocol/protocolVersion", MODERN,
                    "io.modelcontextprotocol/clientCapabilities", Map.of("elicitation", Map.of("form", Map.of()))));
            HttpRequest request = HttpRequest.newBuilder(URI.create(url))
                    .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream").header("Mcp-Method", "tools/call")
                    .header("Mcp-Name", tool).header("MCP-Protocol-Version", MODERN).timeout(TetherClient.CALL_BOUND)
                    .POST(HttpRequest.BodyPublishers.ofString(TetherClient.JSON.writeValueAsString(Map.of("jsonrpc", "2.0",
                            "id", 1, "method", "tools/call", "params", params))))
                    .build();
            HttpResponse<String> answer = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            return TetherClient.JSON.readTree(answer.body());
        }
    }
}
