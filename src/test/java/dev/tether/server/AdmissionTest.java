package dev.tether.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Requests beyond what the server takes are answered at once, never refused at accept nor reset: past a client's share
 * {@code 429 TooManyRequestsError}, past the whole server's {@code 503 ServerBusyError}, both with {@code Retry-After}
 * and Executor's error body, and the connection stays open for the next request. Requests are held in flight by event
 * streams ({@code GET /api/connections/health/events}), which count as long as they are open. The clients are the ones
 * a trusted proxy (loopback here) names in {@code X-Forwarded-For}, the right-most address it did not add itself
 * counting; a loopback client that names none is this host's user and counts only toward the whole.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + AdmissionTest.TOKEN, "tether.docker.reap-interval=1h",
                "tether.server.max-requests=" + AdmissionTest.MAX_REQUESTS,
                "tether.server.max-requests-per-client=" + AdmissionTest.PER_CLIENT,
                "tether.server.trusted-proxies=127.0.0.1,::1" })
@DirtiesContext
class AdmissionTest {

    static final String TOKEN = "admission-token";
    static final int MAX_REQUESTS = 5;
    static final int PER_CLIENT = 2;
    private static final String ALICE = "203.0.113.7";
    private static final String BOB = "203.0.113.8";
    private static final Duration BOUND = Duration.ofSeconds(30);
    /** An ordinary request: a health probe would pass uncounted. */
    private static final String ROUTE = "/api/integrations";

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry registry;

    private final List<HttpSocket> sockets = new ArrayList<>();

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) throws IOException {
        registry.add("tether.data-dir", Files.createTempDirectory("tether-admission-")::toString);
    }

    @AfterEach
    void closeSockets() throws IOException {
        for (HttpSocket socket : sockets) {
            socket.close();
        }
        await().atMost(BOUND).until(() -> inFlight() == 0);
    }

    @Test
    void aClientBeyondItsShareIsToldToComeBackAndOthersAreServed() throws Exception {
        double shedBefore = shed("client");
        HttpSocket first = stream(ALICE);
        stream(ALICE);
        await().atMost(BOUND).until(() -> inFlight() == 2);

        HttpSocket alice = open();
        HttpSocket.Answer refused = alice.get(ROUTE, as(ALICE));
        assertThat(refused.status()).as(refused.toString()).isEqualTo(429);
        assertThat(refused.headers()).containsEntry("retry-after", "1");
        assertThat(refused.tag()).isEqualTo("TooManyRequestsError");
        assertThat(refused.body()).contains("tether.server.max-requests-per-client");
        HttpSocket.Answer spoofed = alice.get(ROUTE, as(BOB + ", " + ALICE));
        assertThat(spoofed.status()).as("a client's own X-Forwarded-For left of the proxy's entry counts for nothing: "
                + spoofed).isEqualTo(429);

        assertThat(open().get(ROUTE, as(BOB)).status()).as("another client").isEqualTo(200);
        assertThat(open().get(ROUTE, as(null)).status()).as("this host's user").isEqualTo(200);

        first.close();
        await().atMost(BOUND).until(() -> inFlight() == 1);
        assertThat(alice.get(ROUTE, as(ALICE)).status())
                .as("on the connection that was refused, once a request of the client's was answered").isEqualTo(200);
        assertThat(shed("client") - shedBefore).isEqualTo(2);
    }

    @Test
    void aFullServerSaysSoAndServesAgainOnceARequestEnds() throws Exception {
        double shedBefore = shed("requests");
        HttpSocket first = stream(ALICE);
        stream(BOB);
        for (int i = 2; i < MAX_REQUESTS; i++) {
            stream(null);
        }
        await().atMost(BOUND).until(() -> inFlight() == MAX_REQUESTS);

        HttpSocket anyone = open();
        HttpSocket.Answer busy = anyone.get(ROUTE, as(null));
        assertThat(busy.status()).as(busy.toString()).isEqualTo(503);
        assertThat(busy.headers()).containsEntry("retry-after", "1");
        assertThat(busy.tag()).isEqualTo("ServerBusyError");
        assertThat(busy.body()).contains("tether.server.max-requests");
        assertThat(open().get(ROUTE, as("198.51.100.1")).status())
                .as("a client with nothing in flight, too").isEqualTo(503);

        first.close();
        await().atMost(BOUND).until(() -> inFlight() == MAX_REQUESTS - 1);
        assertThat(anyone.get(ROUTE, as(null)).status()).as("the connection the server was full for").isEqualTo(200);
        assertThat(shed("requests") - shedBefore).isEqualTo(2);
    }

    @Test
    void aHealthProbeIsNeverShed() throws Exception {
        for (int i = 0; i < MAX_REQUESTS; i++) {
            stream(i < PER_CLIENT ? ALICE : null);
        }
        await().atMost(BOUND).until(() -> inFlight() == MAX_REQUESTS);
        assertThat(open().get(ROUTE, as(null)).status()).as("the server is full").isEqualTo(503);
        for (String probe : new String[] {"/api/health", "/actuator/health", "/actuator/health/liveness", "/actuator/health/readiness"}) {
            HttpSocket.Answer answer = open().get(probe, Map.of("X-Forwarded-For", ALICE));
            assertThat(answer.status()).as(probe + " from a client past its share, on a full server: " + answer).isEqualTo(200);
        }
    }

    /** A request that stays in flight: an event stream, from {@code client} as the proxy names it (none: this host's user). */
    private HttpSocket stream(String client) throws IOException {
        HttpSocket socket = open();
        socket.send("GET /api/connections/health/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN
                + "\r\nAccept: text/event-stream\r\n" + (client == null ? "" : "X-Forwarded-For: " + client + "\r\n") + "\r\n");
        return socket;
    }

    /** The headers of an ordinary request from {@code client} as the proxy names it (none: this host's user). */
    private static Map<String, String> as(String client) {
        return client == null ? Map.of("Authorization", "Bearer " + TOKEN)
                : Map.of("Authorization", "Bearer " + TOKEN, "X-Forwarded-For", client);
    }

    private HttpSocket open() throws IOException {
        HttpSocket socket = HttpSocket.open(port);
        sockets.add(socket);
        return socket;
    }

    private double inFlight() {
        return registry.get("tether.server.requests").gauge().value();
    }

    private double shed(String reason) {
        return registry.get("tether.server.shed").tag("reason", reason).counter().count();
    }
}
