package dev.tether.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A crowd against the real server: more kept-alive idle connections and slowloris sockets (half a request head, then
 * a byte now and then) than the old accept cap of 512 let in, all held open at once, and still every ordinary request
 * is answered 200, every idle connection answers its next request, and no slow socket is closed before its header
 * timeout (an hour here: the test is over long before). Counts stay modest for a two-core CI; the 10,000 figure is
 * {@code bench/crowd.sh}'s.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=crowd-token", "tether.docker.reap-interval=1h", "tether.server.header-timeout=1h" })
@DirtiesContext
class CrowdTest {

    private static final int IDLE = 400;
    private static final int SLOW = 200;
    private static final int ORDINARY = 50;
    private static final Duration BOUND = Duration.ofSeconds(60);

    @LocalServerPort
    int port;

    @Autowired
    SlowClients slowClients;

    private final List<HttpSocket> sockets = new ArrayList<>();

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) throws IOException {
        registry.add("tether.data-dir", Files.createTempDirectory("tether-crowd-")::toString);
    }

    @AfterEach
    void closeSockets() throws IOException {
        for (HttpSocket socket : sockets) {
            socket.close();
        }
    }

    @Test
    void anIdleAndSlowlorisCrowdLocksNobodyOut() throws Exception {
        List<HttpSocket> idle = new ArrayList<>();
        for (int i = 0; i < IDLE; i++) {
            HttpSocket socket = keep(HttpSocket.open(port));
            assertThat(socket.get("/api/health", Map.of()).status()).as("idle connection #%d's first request", i).isEqualTo(200);
            idle.add(socket);
        }
        List<HttpSocket> slow = new ArrayList<>();
        for (int i = 0; i < SLOW; i++) {
            HttpSocket socket = keep(HttpSocket.open(port));
            socket.send("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow-" + i + ": ");
            slow.add(socket);
        }
        for (int i = 0; i < SLOW; i += 10) {
            slow.get(i).send("x");
        }
        await().atMost(BOUND).until(() -> slowClients.open() >= IDLE + SLOW);

        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        List<CompletableFuture<HttpResponse<String>>> ordinary = new ArrayList<>();
        for (int i = 0; i < ORDINARY; i++) {
            ordinary.add(http.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/integrations"))
                    .header("Authorization", "Bearer crowd-token").timeout(BOUND).build(), HttpResponse.BodyHandlers.ofString()));
        }
        for (CompletableFuture<HttpResponse<String>> answer : ordinary) {
            HttpResponse<String> response = answer.get();
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        }
        assertThat(slowClients.open()).as("the crowd is still there").isGreaterThanOrEqualTo(IDLE + SLOW);

        for (int i = 0; i < IDLE; i++) {
            HttpSocket.Answer again = idle.get(i).get("/api/health", Map.of());
            assertThat(again.status()).as("idle connection #%d's second request: %s", i, again).isEqualTo(200);
        }
        for (int i = 0; i < SLOW; i++) {
            assertThat(slow.get(i).closedByServer(1)).as("slowloris socket #%d, an hour before its header timeout", i).isFalse();
        }
    }

    private HttpSocket keep(HttpSocket socket) {
        sockets.add(socket);
        return socket;
    }
}
