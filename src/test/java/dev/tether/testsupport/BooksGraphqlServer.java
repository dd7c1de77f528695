package dev.tether.testsupport;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import graphql.ExecutionInput;
import graphql.GraphQL;
import graphql.schema.GraphQLSchema;
import graphql.schema.idl.RuntimeWiring;
import graphql.schema.idl.SchemaGenerator;
import graphql.schema.idl.SchemaParser;
import io.netty.handler.codec.http.HttpHeaderNames;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * A real GraphQL server for tests: graphql-java executing a small books schema, served over HTTP by Reactor Netty on
 * a loopback port. It counts the connections open to it (as the upstream sees them), and its {@code slow} query
 * never answers, so that a caller has to leave. {@code /not-graphql} answers an HTML page.
 */
public final class BooksGraphqlServer implements AutoCloseable {

    private static final String SCHEMA = """
            "A book"
            type Book { id: ID!, title: String!, author: Author! }
            type Author { name: String!, books: [Book!]! }
            input BookInput { title: String!, author: String! }
            type Query {
              "One book by its id"
              book(id: ID!): Book
              books(author: String): [Book!]!
              slow: String
            }
            type Mutation { addBook(input: BookInput!): Book! }
            """;
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final List<Map<String, Object>> books = new CopyOnWriteArrayList<>();
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicInteger slowStarted = new AtomicInteger();
    private final List<String> authorizations = new CopyOnWriteArrayList<>();
    private final GraphQL graphql;
    private final DisposableServer server;

    public BooksGraphqlServer() {
        this(0);
    }

    /** On a fixed loopback port ({@code 0}: any free one). */
    public BooksGraphqlServer(int port) {
        books.add(book("1", "Dune", "Frank Herbert"));
        books.add(book("2", "Children of Dune", "Frank Herbert"));
        books.add(book("3", "Solaris", "Stanisław Lem"));
        RuntimeWiring wiring = RuntimeWiring.newRuntimeWiring()
                .type("Query", type -> type
                        .dataFetcher("book", env -> books.stream().filter(b -> b.get("id").equals(env.getArgument("id"))).findFirst().orElse(null))
                        .dataFetcher("books", env -> books.stream().filter(b -> env.getArgument("author") == null
                                || ((Map<?, ?>) b.get("author")).get("name").equals(env.getArgument("author"))).toList())
                        .dataFetcher("slow", env -> {
                            slowStarted.incrementAndGet();
                            return new CompletableFuture<String>();
                        }))
                .type("Author", type -> type.dataFetcher("books", env -> books.stream()
                        .filter(b -> ((Map<?, ?>) b.get("author")).get("name").equals(((Map<?, ?>) env.getSource()).get("name"))).toList()))
                .type("Mutation", type -> type.dataFetcher("addBook", env -> {
                    Map<String, Object> input = env.getArgument("input");
                    Map<String, Object> added = book(String.valueOf(books.size() + 1), (String) input.get("title"), (String) input.get("author"));
                    books.add(added);
                    return added;
                }))
                .build();
        GraphQLSchema schema = new SchemaGenerator().makeExecutableSchema(new SchemaParser().parse(SCHEMA), wiring);
        this.graphql = GraphQL.newGraphQL(schema).build();
        this.server = HttpServer.create().host("127.0.0.1").port(port)
                .doOnConnection(connection -> {
                    open.incrementAndGet();
                    connection.onDispose(open::decrementAndGet);
                })
                .route(routes -> routes
                        .post("/graphql", (request, response) -> request.receive().aggregate().asString(StandardCharsets.UTF_8)
                                .defaultIfEmpty("{}")
                                // graphql-java loads its message bundles from the class path: not on an event loop
                                .publishOn(Schedulers.boundedElastic())
                                .flatMap(body -> {
                                    authorizations.add(String.valueOf(request.requestHeaders().get(HttpHeaderNames.AUTHORIZATION)));
                                    Map<String, Object> query = JSON.readValue(body, new TypeReference<Map<String, Object>>() { });
                                    @SuppressWarnings("unchecked")
                                    Map<String, Object> variables = query.get("variables") instanceof Map<?, ?> v ? (Map<String, Object>) v : Map.of();
                                    return Mono.fromFuture(graphql.executeAsync(ExecutionInput.newExecutionInput()
                                            .query((String) query.get("query")).variables(variables).build()));
                                })
                                .flatMap(result -> response.header("content-type", "application/json")
                                        .sendString(Mono.just(JSON.writeValueAsString(result.toSpecification()))).then()))
                        .route(request -> request.uri().startsWith("/not-graphql"), (request, response) -> request.receive().then(
                                response.header("content-type", "text/html").sendString(Mono.just("<html><body>Hello</body></html>")).then())))
                .bindNow(Duration.ofSeconds(10));
    }

    private static Map<String, Object> book(String id, String title, String author) {
        Map<String, Object> book = new LinkedHashMap<>();
        book.put("id", id);
        book.put("title", title);
        book.put("author", Map.of("name", author));
        return book;
    }

    public String endpoint() {
        return "http://127.0.0.1:" + server.port() + "/graphql";
    }

    public String notGraphql() {
        return "http://127.0.0.1:" + server.port() + "/not-graphql";
    }

    /** Connections open to this server now, as it sees them. */
    public int openConnections() {
        return open.get();
    }

    /** How many {@code slow} queries began. */
    public int slowStarted() {
        return slowStarted.get();
    }

    /** The {@code Authorization} header of each request, in order ({@code null} when there was none). */
    public List<String> authorizations() {
        return List.copyOf(authorizations);
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(10));
    }
}
