package dev.tether.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

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
 * {@code tether.server.max-connections} against the real server: with the cap's worth of connections open, one more
 * is closed as soon as it is accepted, with a log line naming the setting; once one of them closes, a new connection
 * is served again.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=connection-cap-token", "tether.docker.reap-interval=1h",
                "tether.server.max-connections=" + ConnectionCapTest.CAP })
@DirtiesContext
@ExtendWith(OutputCaptureExtension.class)
class ConnectionCapTest {

    static final int CAP = 20;

    @LocalServerPort
    int port;

    @Autowired
    SlowClients slowClients;

    private final List<Socket> sockets = new ArrayList<>();

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) throws IOException {
        registry.add("tether.data-dir", Files.createTempDirectory("tether-cap-")::toString);
    }

    @AfterEach
    void closeSockets() throws IOException {
        for (Socket socket : sockets) {
            socket.close();
        }
    }

    @Test
    void aConnectionBeyondTheCapIsClosedAtOnceAndTheNextOneAfterAClosingIsServed(CapturedOutput output) throws Exception {
        await().atMost(Duration.ofSeconds(10)).until(() -> slowClients.open() == 0);
        for (int i = 0; i < CAP; i++) {
            sockets.add(new Socket(InetAddress.getLoopbackAddress(), port));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> slowClients.open() == CAP);

        try (Socket beyond = new Socket(InetAddress.getLoopbackAddress(), port)) {
            beyond.setSoTimeout(5_000);
            assertThat(endOfStream(beyond)).as("the connection beyond the cap is closed by the server").isTrue();
        }
        assertThat(output.getAll()).contains("at tether.server.max-connections (" + CAP + " open)");

        sockets.remove(0).close();
        await().atMost(Duration.ofSeconds(10)).until(() -> slowClients.open() == CAP - 1);
        try (Socket next = new Socket(InetAddress.getLoopbackAddress(), port)) {
            next.setSoTimeout(10_000);
            next.getOutputStream().write("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            assertThat(new String(next.getInputStream().readAllBytes(), StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 200");
        }
    }

    private static boolean endOfStream(Socket socket) throws IOException {
        try {
            return socket.getInputStream().read() < 0;
        }
        catch (SocketTimeoutException open) {
            return false;
        }
        catch (IOException reset) {
            return true;
        }
    }
}
