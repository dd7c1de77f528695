package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tether.testsupport.Await;

/**
 * A client that leaves in the middle of sending its request body (the bug report's storm abandons requests like this
 * by the hundred) is a disconnect, not a failure of Tether's: the log says so in Spring's quiet disconnect line and
 * carries no {@code internal error} with a stack trace, which an operator would have to read as a bug.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + ClientLeftTest.TOKEN, "tether.docker.reap-interval=1h",
                // Spring's disconnect lines, quiet by default: where the exception handler passes a disconnect on,
                // and where the server fails to write an answer to a client that left.
                "logging.level.org.springframework.web.reactive.result.method.annotation.DisconnectedClient=DEBUG",
                "logging.level.org.springframework.web.server.DisconnectedClient=DEBUG" })
@DirtiesContext
@ExtendWith(OutputCaptureExtension.class)
class ClientLeftTest {

    static final String TOKEN = "client-left-test-token";

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) throws IOException {
        registry.add("tether.data-dir", Files.createTempDirectory("tether-client-left-")::toString);
    }

    @Test
    void aClientThatLeavesMidBodyIsLoggedAsGoneNotAsAnInternalError(CapturedOutput output) throws IOException {
        String half = "{\"slug\":\"left\",\"transport\":\"stdio\",\"name\":\"Le";
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /api/mcp/servers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN
                    + "\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n" + half).getBytes(StandardCharsets.UTF_8));
            out.flush();
        }
        Await.until(() -> output.getAll().contains("client has gone away"), Duration.ofSeconds(10),
                () -> "Spring's disconnect line; the log was:\n" + output.getAll());
        assertThat(output.getAll()).doesNotContain("internal error").doesNotContain("AbortedException: Connection has been closed\n\tat");
    }
}
