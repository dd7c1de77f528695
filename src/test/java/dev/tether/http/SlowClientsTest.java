package dev.tether.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

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
 * Slow clients against the real server on a loopback port: 1,000 sockets that each send half a request head
 * (slowloris) and go on trickling bytes are all closed by the server within {@code tether.http.header-timeout} of
 * their opening, the log says so in a few lines (not a thousand), and the process's open files come back to where
 * they were; a whole request still gets its answer.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=slow-clients-token", "tether.docker.reap-interval=1h",
                "tether.http.header-timeout=" + SlowClientsTest.HEADER_TIMEOUT_MS + "ms",
                "tether.http.max-connections=" + (2 * SlowClientsTest.SLOW) })
@DirtiesContext
@ExtendWith(OutputCaptureExtension.class)
class SlowClientsTest {

    static final int SLOW = 1000;
    static final long HEADER_TIMEOUT_MS = 3000;
    /** Scheduling on a loaded two-core machine (load 20): accepting, arming and firing 1,000 deadlines on busy event
     *  loops took up to 6.5 s for a 3 s timeout there. */
    private static final Duration SLACK = Duration.ofSeconds(4);

    @LocalServerPort
    int port;

    @Autowired
    SlowClients slowClients;

    private final List<Socket> sockets = new ArrayList<>();

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) throws IOException {
        registry.add("tether.data-dir", Files.createTempDirectory("tether-slow-")::toString);
    }

    @AfterEach
    void closeSockets() throws IOException {
        for (Socket socket : sockets) {
            socket.close();
        }
    }

    @Test
    void halfSentRequestsAreClosedWithinTheHeaderTimeoutAndTheirFilesGoBack(CapturedOutput output) throws Exception {
        answers();
        await().atMost(Duration.ofSeconds(10)).until(() -> slowClients.open() == 0);
        long baseline = openFiles();

        long[] opened = new long[SLOW];
        for (int i = 0; i < SLOW; i++) {
            Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
            sockets.add(socket);
            opened[i] = System.nanoTime();
            socket.getOutputStream().write(("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow-" + i + ": ")
                    .getBytes(StandardCharsets.US_ASCII));
        }
        // Each socket keeps trickling a byte now and then, which resets an idle timeout but not the head's deadline.
        long deadline = opened[0] + Duration.ofMillis(HEADER_TIMEOUT_MS).plus(SLACK).toNanos();
        for (int i = 0; i < SLOW; i += 10) {
            trickle(sockets.get(i));
        }
        List<String> late = new ArrayList<>();
        for (int i = 0; i < SLOW; i++) {
            long due = Math.max(opened[i] + Duration.ofMillis(HEADER_TIMEOUT_MS).plus(SLACK).toNanos(), deadline);
            if (!closedBy(sockets.get(i), Duration.ofNanos(Math.max(due - System.nanoTime(), Duration.ofMillis(50).toNanos())))) {
                boolean closedLater = closedBy(sockets.get(i), Duration.ofSeconds(30));
                late.add("#" + i + (closedLater ? " closed " + Duration.ofNanos(System.nanoTime() - opened[i]).toMillis()
                        + " ms after its opening" : " still open"));
            }
        }
        assertThat(late).as("sockets the server had not closed %s after their opening (opening all took %d ms)",
                SLACK.plusMillis(HEADER_TIMEOUT_MS), Duration.ofNanos(opened[SLOW - 1] - opened[0]).toMillis()).isEmpty();
        for (Socket socket : sockets) {
            socket.close();
        }
        sockets.clear();

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(openFiles()).as("open files, %d before the slow clients", baseline).isLessThanOrEqualTo(baseline + 5));
        answers();
        assertThat(output.getAll()).contains("(tether.http.header-timeout)");
        assertThat(output.getAll().lines().filter(line -> line.contains("tether.http.header-timeout")).count())
                .as("lines about closed connections").isLessThan(30);
    }

    /** A whole request on a connection of its own, which the answer closes. */
    private void answers() throws Exception {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            assertThat(new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 200");
        }
    }

    private static void trickle(Socket socket) {
        try {
            OutputStream out = socket.getOutputStream();
            out.write('x');
            out.flush();
        }
        catch (IOException closedAlready) {
            // the server closed it: what is wanted
        }
    }

    /** Whether the server closed the socket (end of stream or reset) within {@code bound}. */
    private static boolean closedBy(Socket socket, Duration bound) throws IOException {
        socket.setSoTimeout((int) Math.max(1, bound.toMillis()));
        InputStream in = socket.getInputStream();
        try {
            byte[] buffer = new byte[1024];
            while (true) {
                if (in.read(buffer) < 0) {
                    return true;
                }
            }
        }
        catch (SocketTimeoutException open) {
            return false;
        }
        catch (IOException reset) {
            return true;
        }
    }

    private static long openFiles() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("/proc/self/fd"))) {
            return files.count();
        }
    }
}
