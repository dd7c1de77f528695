package dev.tether.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.util.unit.DataSize;

/**
 * Netty's own measure of its buffers as the signal: a spec upload whose body is read whole (bounded per route, here
 * 128 MB) holds its bytes in the server's pooled buffers while it arrives; once the buffers pinned to live ones pass
 * {@code tether.server.max-buffer-memory},
 * a new request is answered {@code 503 ServerBusyError} with {@code Retry-After}, and once the upload is gone and its
 * buffers are released, requests are served again.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + BufferMemoryTest.TOKEN, "tether.docker.reap-interval=1h",
                "tether.server.max-buffer-memory=" + BufferMemoryTest.BUDGET_MB + "MB", "tether.server.body-timeout=5m",
                "tether.http.max-document-size=64MB" })
@DirtiesContext
class BufferMemoryTest {

    static final String TOKEN = "buffer-memory-token";
    static final int BUDGET_MB = 48;
    private static final Duration BOUND = Duration.ofSeconds(60);
    /** An ordinary request: a health probe would pass uncounted. */
    private static final String ROUTE = "/api/integrations";
    private static final Map<String, String> AUTHORIZED = Map.of("Authorization", "Bearer " + TOKEN);

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry registry;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) throws IOException {
        registry.add("tether.data-dir", Files.createTempDirectory("tether-buffers-")::toString);
    }

    @Test
    void newRequestsAreShedWhileNettysBuffersAreOverTheBudget() throws Exception {
        try (HttpSocket other = HttpSocket.open(port)) {
            assertThat(other.get(ROUTE, AUTHORIZED).status()).isEqualTo(200);
            assertThat(buffers()).as("at rest").isLessThan(DataSize.ofMegabytes(BUDGET_MB).toBytes());

            try (HttpSocket upload = HttpSocket.open(port)) {
                upload.send("POST /api/openapi/preview HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN
                        + "\r\nContent-Type: application/json\r\nContent-Length: " + DataSize.ofMegabytes(120).toBytes() + "\r\n\r\n");
                upload.sendBody(DataSize.ofMegabytes(2 * BUDGET_MB).toBytes());
                await().atMost(BOUND).until(() -> buffers() > DataSize.ofMegabytes(BUDGET_MB).toBytes());

                HttpSocket.Answer busy = other.get(ROUTE, AUTHORIZED);
                assertThat(busy.status()).as(busy.toString()).isEqualTo(503);
                assertThat(busy.headers()).containsEntry("retry-after", "1");
                assertThat(busy.tag()).isEqualTo("ServerBusyError");
                assertThat(busy.body()).contains("tether.server.max-buffer-memory");
            }
            await().atMost(BOUND).until(() -> buffers() < DataSize.ofMegabytes(BUDGET_MB).toBytes());
            await().atMost(BOUND).untilAsserted(() -> assertThat(other.get(ROUTE, AUTHORIZED).status())
                    .as("served again on the same connection once the upload's buffers are released").isEqualTo(200));
        }
        assertThat(registry.get("tether.server.shed").tag("reason", "memory").counter().count()).isGreaterThanOrEqualTo(1);
    }

    private double buffers() {
        return registry.get("tether.server.buffers").gauge().value();
    }
}
