package dev.tether.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Slow clients against the real server on a loopback port: sockets that send half a request head (slowloris), some
 * trickling a byte now and then, and sockets that send a head and half its body, are each closed by the server by
 * their own deadline ({@code tether.server.header-timeout}, {@code body-timeout}), counted by reason; so is a client
 * that asks and asks and reads none of the answers ({@code write-timeout}: the server's output stays unwritable); the
 * log says so in
 * a few lines (not one per socket, neither Tether's nor Reactor Netty's), the process's open files come back to where
 * they were, and a whole request is still answered. That no socket is closed before its deadline is
 * {@link CrowdTest}'s: there they outlive the test.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + SlowClientsTest.TOKEN, "tether.docker.reap-interval=1h",
                "tether.server.header-timeout=2s", "tether.server.body-timeout=2s", "tether.server.write-timeout=2s" })
@DirtiesContext
@ExtendWith(OutputCaptureExtension.class)
class SlowClientsTest {

    static final String TOKEN = "slow-clients-token";
    private static final int SLOW_HEADS = 200;
    private static final int SLOW_BODIES = 20;
    /** A bound on waiting for the server to close a socket, far beyond the deadlines; not a measure of them. */
    private static final int CLOSED_WITHIN_MILLIS = 60_000;

    @LocalServerPort
    int port;

    @Autowired
    SlowClients slowClients;

    @Autowired
    MeterRegistry registry;

    private final List<HttpSocket> sockets = new ArrayList<>();

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) throws IOException {
        registry.add("tether.data-dir", Files.createTempDirectory("tether-slow-")::toString);
    }

    @AfterEach
    void closeSockets() throws IOException {
        for (HttpSocket socket : sockets) {
            socket.close();
        }
    }

    @Test
    void halfSentHeadsAndBodiesAreClosedByTheirDeadlinesAndTheirFilesGoBack(CapturedOutput output) throws Exception {
        answers();
        await().atMost(Duration.ofSeconds(30)).until(() -> slowClients.open() == 0);
        long baseline = openFiles();

        List<HttpSocket> heads = new ArrayList<>();
        for (int i = 0; i < SLOW_HEADS; i++) {
            HttpSocket socket = keep(HttpSocket.open(port));
            socket.send("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow-" + i + ": ");
            heads.add(socket);
        }
        List<HttpSocket> bodies = new ArrayList<>();
        for (int i = 0; i < SLOW_BODIES; i++) {
            HttpSocket socket = keep(HttpSocket.open(port));
            socket.send("POST /api/policies HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN
                    + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"owner\":");
            bodies.add(socket);
        }
        // A byte now and then resets an idle timeout, but not a head's deadline.
        for (int i = 0; i < SLOW_HEADS; i += 10) {
            heads.get(i).send("x");
        }

        for (int i = 0; i < SLOW_HEADS; i++) {
            assertThat(heads.get(i).closedByServer(CLOSED_WITHIN_MILLIS)).as("half a head, socket #%d", i).isTrue();
        }
        for (int i = 0; i < SLOW_BODIES; i++) {
            assertThat(bodies.get(i).closedByServer(CLOSED_WITHIN_MILLIS)).as("half a body, socket #%d", i).isTrue();
        }
        assertThat(closed("header_timeout")).isEqualTo(SLOW_HEADS);
        assertThat(closed("body_timeout")).isEqualTo(SLOW_BODIES);
        for (HttpSocket socket : sockets) {
            socket.close();
        }
        sockets.clear();

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(openFiles()).as("open files, %d before the slow clients", baseline).isLessThanOrEqualTo(baseline + 5));
        answers();
        assertThat(output.getAll()).contains("(tether.server.header-timeout)", "(tether.server.body-timeout)");
        assertThat(output.getAll().lines().filter(line -> line.contains("closed a connection from")).count())
                .as("lines about closed connections").isLessThan(30);
        assertThat(output.getAll()).as("Reactor Netty's line for each head cut short").doesNotContain("PrematureChannelClosureException");
    }

    /**
     * A client that sends request after request on one connection (pipelined) and reads none of the answers: once its
     * receive window and the server's socket are full, Netty's channel turns unwritable, and the connection is closed
     * by the write deadline, not held with its answers in memory.
     */
    @Test
    void aClientThatReadsNothingIsClosedByTheWriteDeadline(CapturedOutput output) throws Exception {
        double before = closed("write_timeout");
        try (HttpSocket deaf = HttpSocket.withReceiveBuffer(port, 4096)) {
            StringBuilder requests = new StringBuilder();
            for (int i = 0; i < 200; i++) {
                requests.append("GET /api/docs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
            }
            deaf.send(requests.toString());
            await().atMost(Duration.ofSeconds(60)).until(() -> closed("write_timeout") > before);
        }
        assertThat(output.getAll()).contains("(tether.server.write-timeout)");
        answers();
    }

    /** A whole request on a connection of its own. */
    private void answers() throws IOException {
        try (HttpSocket socket = HttpSocket.open(port)) {
            assertThat(socket.get("/api/health", Map.of()).status()).isEqualTo(200);
        }
    }

    private double closed(String reason) {
        return registry.get("tether.server.closed").tag("reason", reason).counter().count();
    }

    private HttpSocket keep(HttpSocket socket) {
        sockets.add(socket);
        return socket;
    }

    private static long openFiles() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("/proc/self/fd"))) {
            return files.count();
        }
    }
}
