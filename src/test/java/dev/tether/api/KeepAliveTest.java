package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tether.testsupport.Fixture;

/**
 * A client that keeps its connection alive, as the Executor app's does, sends its next request as soon as the
 * previous answer arrived, sometimes before the server has finished with that one. Reactor Netty 1.3.6 could
 * then stop reading the connection, and the request hung until the client gave up (reactor-netty#4361, seen
 * here as a tool call that never reached its server). Every one of many back-to-back requests on one
 * connection must be answered promptly.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "tether.api.token=" + KeepAliveTest.TOKEN)
@DirtiesContext
@InProcess
class KeepAliveTest {

    static final String TOKEN = "keep-alive-test-token";

    private static final Path DATA_DIR = DataDirs.create("keep-alive");
    private static final int ROUNDS = 300;
    /** Far above a warm answer (a few ms), far below a stall (until the client's own timeout). */
    private static final Duration PROMPT = Duration.ofSeconds(10);

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @LocalServerPort
    int port;

    @Test
    void backToBackRequestsOnOneConnectionAreAllAnswered() throws Exception {
        TetherClient tether = new TetherClient(port, TOKEN);
        String slug = tether.registerAndSync("keep_alive", Fixture.command());

        // One connection, reused: the JDK client keeps it alive and never pipelines.
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        String call = "{\"address\":\"tools." + slug + ".org.default.echo\",\"args\":{\"text\":\"again\"}}";
        List<HttpRequest> round = List.of(
                request("/api/tools?integration=" + slug).GET().build(),
                request("/api/tools/call").POST(HttpRequest.BodyPublishers.ofString(call)).build(),
                request("/api/connections/org/" + slug + "/default").GET().build());
        for (int i = 0; i < ROUNDS; i++) {
            for (HttpRequest request : round) {
                HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
                assertThat(answer.statusCode()).as("round %d: %s %s", i, request.method(), request.uri()).isEqualTo(200);
            }
        }
        assertThat(tether.delete("/api/mcp/servers/" + slug).status()).isEqualTo(200);
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Authorization", "Bearer " + TOKEN)
                .header("Content-Type", "application/json")
                .timeout(PROMPT);
    }
}
