package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpMethod;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import reactor.core.Disposable;
import tools.jackson.databind.JsonNode;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.BooksGraphqlServer;

/**
 * A real GraphQL server (graphql-java over Reactor Netty, started here) added to Tether by introspection: a query
 * with arguments and nested objects answered from code, a mutation paused for approval, an endpoint that is not
 * GraphQL refused, and a storm of abandoned calls that leaves the upstream with no open connection.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext
@InProcess
class GraphqlSourcesTest {

    private static final Path DATA_DIR = DataDirs.create("graphql");
    private static BooksGraphqlServer books;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @LocalServerPort
    int port;

    private TetherClient tether;

    @BeforeAll
    static void startServer() {
        books = new BooksGraphqlServer();
    }

    @AfterAll
    static void stopServer() {
        books.close();
        DataDirs.delete(DATA_DIR);
    }

    @BeforeEach
    void connect() {
        tether = new TetherClient(port, DataDirs.token(DATA_DIR));
    }

    @AfterEach
    void cleanUp() {
        for (JsonNode integration : tether.get("/api/integrations").json()) {
            tether.delete("/api/integrations/" + integration.path("slug").asString());
        }
    }

    @Test
    void anIntrospectedServerAnswersQueriesAndPausesMutations() {
        JsonNode added = ok(tether.post("/api/graphql/integrations", Map.of("endpoint", books.endpoint(), "slug", "books",
                "authenticationTemplate", List.of(Map.of("slug", "bearer", "type", "apiKey",
                        "headers", Map.of("Authorization", List.of("Bearer ", Map.of("type", "variable", "name", "token"))))))));
        assertThat(added.toString()).isEqualTo("{\"slug\":\"books\",\"name\":\"127_0_0_1\"}");
        ok(tether.post("/api/connections", Map.of("owner", "org", "name", "default", "integration", "books",
                "template", "bearer", "value", "reader-token")));

        JsonNode tools = ok(tether.get("/api/tools?integration=books&includeAnnotations=true"));
        assertThat(tools.valueStream().map(t -> t.path("name").asString()))
                .containsExactlyInAnyOrder("query.book", "query.books", "query.slow", "mutation.addBook");
        JsonNode addBook = tools.valueStream().filter(t -> t.path("name").asString().equals("mutation.addBook")).findFirst().orElseThrow();
        assertThat(addBook.path("requiresApproval").asBoolean()).isTrue();
        assertThat(addBook.path("approvalDescription").asString()).isEqualTo("mutation addBook");
        assertThat(addBook.path("pluginId").asString()).isEqualTo("graphql");

        JsonNode answer = execute("return await tools.books.org.default.query.book({id: '1'})");
        JsonNode result = answer.path("structured").path("result");
        assertThat(result.path("ok").asBoolean()).as(answer.toString()).isTrue();
        assertThat(result.path("data").path("book").path("title").asString()).isEqualTo("Dune");
        assertThat(result.path("data").path("book").path("author").path("name").asString()).isEqualTo("Frank Herbert");
        assertThat(result.path("data").path("book").path("author").has("books"))
                .as("Book inside Book: left out, as a bare composite field would be refused").isFalse();
        assertThat(books.authorizations()).last().isEqualTo("Bearer reader-token");

        JsonNode schema = ok(tether.get("/api/tools/schema?address=tools.books.org.default.mutation.addBook"));
        assertThat(schema.path("inputSchema").path("properties").path("input").path("$ref").asString()).isEqualTo("#/$defs/BookInput");
        assertThat(schema.path("inputSchema").path("$defs").path("BookInput").path("required").toString()).isEqualTo("[\"title\",\"author\"]");

        JsonNode paused = execute("return await tools.books.org.default.mutation.addBook({input: {title: 'Eden', author: 'Stanisław Lem'}})");
        assertThat(paused.path("status").asString()).as(paused.toString()).isEqualTo("paused");
        String id = paused.path("structured").path("executionId").asString();
        JsonNode none = execute("return await tools.books.org.default.query.books({author: 'Stanisław Lem'})");
        assertThat(none.path("structured").path("result").path("data").path("books").size()).as("nothing added while paused").isEqualTo(1);
        Reply accepted = tether.post("/api/executions/" + id + "/resume", Map.of("action", "accept"));
        assertThat(accepted.status()).isEqualTo(200);
        assertThat(accepted.json().path("structured").path("result").path("data").path("addBook").path("title").asString()).isEqualTo("Eden");
        JsonNode two = execute("return await tools.books.org.default.query.books({author: 'Stanisław Lem'})");
        assertThat(two.path("structured").path("result").path("data").path("books").size()).isEqualTo(2);
    }

    @Test
    void anEndpointThatIsNotGraphqlIsRefusedAndNothingIsStored() {
        Reply refused = tether.post("/api/graphql/integrations", Map.of("endpoint", books.notGraphql(), "slug", "html"));
        assertThat(refused.status()).as(refused.toString()).isEqualTo(400);
        assertThat(refused.json().path("_tag").asString()).isEqualTo("GraphqlIntrospectionError");
        assertThat(refused.json().path("message").asString()).contains("Not a GraphQL endpoint").contains("text/html");
        Reply unreachable = tether.post("/api/graphql/integrations", Map.of("endpoint", "http://127.0.0.1:9/graphql", "slug", "gone"));
        assertThat(unreachable.json().path("_tag").asString()).isEqualTo("GraphqlIntrospectionError");
        Reply notJson = tether.post("/api/graphql/integrations", Map.of("endpoint", books.endpoint(), "slug", "blob",
                "introspectionJson", "{\"data\": {\"__schema\": {\"types\": \"no\"}}}"));
        assertThat(notJson.json().path("_tag").asString()).as(notJson.toString()).isEqualTo("GraphqlExtractionError");
        assertThat(tether.get("/api/integrations").json().valueStream().map(i -> i.path("slug").asString())).containsExactly("executor");
    }

    @Test
    void aStormOfAbandonedCallsLeavesNoUpstreamConnectionOpen() {
        ok(tether.post("/api/graphql/integrations", Map.of("endpoint", books.endpoint(), "slug", "storm")));
        ok(tether.post("/api/connections", Map.of("owner", "org", "name", "default", "integration", "storm",
                "template", "none", "values", Map.of())));
        int calls = 12;
        int before = books.slowStarted();
        List<Disposable> inFlight = new ArrayList<>();
        Queue<Object> answeredEarly = new ConcurrentLinkedQueue<>();
        for (int i = 0; i < calls; i++) {
            inFlight.add(tether.exchange(HttpMethod.POST, "/api/executions",
                    Map.of("code", "return await tools.storm.org.default.query.slow()")).subscribe(answeredEarly::add, answeredEarly::add));
        }
        Await.until(() -> books.slowStarted() - before == calls, Duration.ofSeconds(120),
                () -> "all " + calls + " calls reach the upstream; " + (books.slowStarted() - before) + " did; answered before: "
                        + answeredEarly);
        assertThat(books.openConnections()).as("each call holds a connection to the upstream").isGreaterThanOrEqualTo(calls);
        inFlight.forEach(Disposable::dispose);
        Await.until(() -> books.openConnections() == 0, Duration.ofSeconds(20),
                () -> "the upstream sees no open connection once every caller left; it sees " + books.openConnections());
    }

    private JsonNode execute(String code) {
        return ok(tether.post("/api/executions", Map.of("code", code)));
    }

    private static JsonNode ok(Reply reply) {
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply.json();
    }
}
