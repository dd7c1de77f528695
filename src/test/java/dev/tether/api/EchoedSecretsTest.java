package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.json.JsonMapper;

/**
 * A remote server whose errors quote the credentials it was sent (a real HTTP server on loopback: every request
 * is answered {@code 500} with a body that echoes its {@code Authorization} and {@code X-Api-Key} headers, the
 * token alone, and the query string) leaves none of them in what Tether stores, answers or logs: the health
 * verdict's detail, the connection listing, a refresh's and a tool call's errors, the {@code connection} table's
 * rows, and the daemon's log at DEBUG. The integration's header and query values and the connection's credential
 * are all checked.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + EchoedSecretsTest.TOKEN, "tether.docker.reap-interval=1h",
                "logging.level.dev.tether=DEBUG", "tether.store.write-behind=50ms" })
@DirtiesContext
@ExtendWith(OutputCaptureExtension.class)
class EchoedSecretsTest {

    static final String TOKEN = "echoed-secrets-test-token";

    private static final Duration BOUND = Duration.ofSeconds(40);
    private static final Path DATA_DIR = RemoteServersTest.temporaryDirectory("tether-echo-");
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);
    private static final String BEARER = "bearer-token-" + RUN;
    private static final String QUERY = "query-value-" + RUN;
    private static final String CREDENTIAL = "credential-value-" + RUN;

    private static HttpServer echo;

    private final List<String> answers = new ArrayList<>();

    @LocalServerPort
    int port;

    @Autowired
    DatabaseClient db;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @BeforeAll
    static void startEcho() throws IOException {
        echo = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        echo.createContext("/", EchoedSecretsTest::refuse);
        echo.start();
    }

    @AfterAll
    static void stopEcho() throws IOException {
        echo.stop(0);
        RemoteServersTest.delete(DATA_DIR);
    }

    /** A 500 that quotes everything it was sent that could be secret, whole and in parts. */
    private static void refuse(HttpExchange exchange) throws IOException {
        String authorization = String.valueOf(exchange.getRequestHeaders().getFirst("Authorization"));
        String body = "{\"error\":\"denied\",\"authorization\":\"" + authorization + "\",\"token\":\""
                + authorization.substring(authorization.indexOf(' ') + 1) + "\",\"apiKey\":\""
                + exchange.getRequestHeaders().getFirst("X-Api-Key") + "\",\"query\":\"" + exchange.getRequestURI().getRawQuery()
                + "\"}";
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(500, bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }

    @Test
    void aServerThatEchoesItsCredentialsLeavesNoneInVerdictsAnswersTheStoreOrTheLog(CapturedOutput output) throws Exception {
        String endpoint = "http://127.0.0.1:" + echo.getAddress().getPort() + "/mcp";
        String slug = JSON.readTree(ok(send("POST", "/api/mcp/servers", Map.of("name", "Echo " + RUN, "endpoint", endpoint,
                "remoteTransport", "streamable-http", "headers", Map.of("Authorization", "Bearer " + BEARER),
                "queryParams", Map.of("key", QUERY))))).path("slug").asString();
        ok(send("POST", "/api/connections", Map.of("owner", "user", "name", "alice", "integration", slug, "template", "api-key",
                "values", Map.of("X-Api-Key", CREDENTIAL))));
        String connection = "/api/connections/user/" + slug + "/alice";

        String verdict = ok(send("POST", connection + "/health", null));
        assertThat(JSON.readTree(verdict).path("status").asString()).isNotEqualTo("healthy");
        assertThat(JSON.readTree(verdict).path("detail").asString()).as("the verdict says what went wrong").contains("500");
        answers.add(send("POST", connection + "/refresh", null).body());
        answers.add(send("POST", "/api/tools/call", Map.of("address", "tools." + slug + ".user.alice.anything",
                "args", Map.of())).body());
        answers.add(ok(send("GET", "/api/connections", null)));
        answers.add(ok(send("GET", connection, null)));

        await().atMost(BOUND).untilAsserted(() -> assertThat(storedDetails()).as("verdicts in the store")
                .anySatisfy(detail -> assertThat(detail).contains("500")));
        for (String secret : List.of(BEARER, QUERY, CREDENTIAL)) {
            assertThat(answers).as("answers").noneMatch(answer -> answer.contains(secret));
            assertThat(storedDetails()).as("verdicts in the store").noneMatch(detail -> detail.contains(secret));
            assertThat(output.getAll()).as("the log").doesNotContain(secret);
        }
    }

    private List<String> storedDetails() {
        return db.sql("SELECT health_detail FROM connection WHERE health_detail IS NOT NULL")
                .map(row -> row.get("health_detail", String.class)).all().collectList().block(BOUND);
    }

    private String ok(ApiClient.Reply reply) {
        answers.add(reply.body());
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply.body();
    }

    private ApiClient.Reply send(String method, String path, Object body) {
        return new ApiClient(port, TOKEN).send(method, path, body);
    }
}
