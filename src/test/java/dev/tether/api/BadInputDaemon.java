package dev.tether.api;

import java.nio.file.Path;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A daemon in the test JVM, with a fixed token and a data dir of its own per test class, for tests that send it
 * what a client gets wrong and check that it answers clearly and loses nothing. {@link #api} is ready in every test.
 */
@InProcess
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + BadInputDaemon.TOKEN, "tether.docker.reap-interval=1h" })
@DirtiesContext
abstract class BadInputDaemon {

    static final String TOKEN = "bad-input-test-token";

    @TempDir
    static Path dataDir;

    @LocalServerPort
    int port;

    ApiClient api;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", () -> dataDir.toString());
    }

    @BeforeEach
    void client() {
        api = new ApiClient(port, TOKEN);
    }
}
