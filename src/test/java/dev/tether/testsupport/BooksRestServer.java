package dev.tether.testsupport;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * A small real HTTP API for tests, described by the OpenAPI 3 document it serves at {@code /openapi.json}: books
 * listed, read, added and deleted, over Reactor Netty on a loopback port. Its {@code servers} entry is its own
 * origin, so a daemon that adds the document by URL calls this server.
 */
public final class BooksRestServer implements AutoCloseable {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final List<Map<String, Object>> books = new CopyOnWriteArrayList<>(List.of(
            Map.of("id", "1", "title", "Dune"), Map.of("id", "2", "title", "Solaris")));
    private final DisposableServer server;

    /** On a fixed loopback port ({@code 0}: any free one). */
    public BooksRestServer(int port) {
        this.server = HttpServer.create().host("127.0.0.1").port(port)
                .route(routes -> routes
                        .get("/openapi.json", (request, response) -> json(response, document()))
                        .get("/books", (request, response) -> json(response, books))
                        .get("/books/{id}", (request, response) -> books.stream()
                                .filter(book -> book.get("id").equals(request.param("id"))).findFirst()
                                .map(book -> json(response, book))
                                .orElseGet(() -> response.status(404).send()))
                        .post("/books", (request, response) -> request.receive().aggregate().asString(StandardCharsets.UTF_8)
                                .flatMap(body -> {
                                    Map<String, Object> book = JSON.readValue(body, new TypeReference<Map<String, Object>>() { });
                                    Map<String, Object> added = Map.of("id", String.valueOf(books.size() + 1), "title", book.get("title"));
                                    books.add(added);
                                    return json(response, added).then();
                                }))
                        .delete("/books/{id}", (request, response) -> {
                            books.removeIf(book -> book.get("id").equals(request.param("id")));
                            return response.status(204).send();
                        }))
                .bindNow(Duration.ofSeconds(10));
    }

    public String origin() {
        return "http://127.0.0.1:" + server.port();
    }

    /** Where its OpenAPI document is served. */
    public String documentUrl() {
        return origin() + "/openapi.json";
    }

    private Map<String, Object> document() {
        Map<String, Object> book = Map.of("type", "object", "required", List.of("id", "title"),
                "properties", Map.of("id", Map.of("type", "string"), "title", Map.of("type", "string")));
        Map<String, Object> bookAnswer = Map.of("description", "The book",
                "content", Map.of("application/json", Map.of("schema", Map.of("$ref", "#/components/schemas/Book"))));
        List<Object> id = List.of(Map.of("name", "id", "in", "path", "required", true, "schema", Map.of("type", "string")));
        return Map.of(
                "openapi", "3.0.3",
                "info", Map.of("title", "Books API", "version", "1.0.0"),
                "servers", List.of(Map.of("url", origin())),
                "tags", List.of(Map.of("name", "books")),
                "paths", Map.of(
                        "/books", Map.of(
                                "get", Map.of("operationId", "listBooks", "tags", List.of("books"), "summary", "Every book",
                                        "responses", Map.of("200", Map.of("description", "The books", "content", Map.of(
                                                "application/json", Map.of("schema", Map.of("type", "array",
                                                        "items", Map.of("$ref", "#/components/schemas/Book"))))))),
                                "post", Map.of("operationId", "addBook", "tags", List.of("books"), "summary", "Adds a book",
                                        "requestBody", Map.of("required", true, "content", Map.of("application/json",
                                                Map.of("schema", Map.of("type", "object", "required", List.of("title"),
                                                        "properties", Map.of("title", Map.of("type", "string")))))),
                                        "responses", Map.of("200", bookAnswer))),
                        "/books/{id}", Map.of(
                                "get", Map.of("operationId", "getBook", "tags", List.of("books"), "parameters", id,
                                        "responses", Map.of("200", bookAnswer, "404", Map.of("description", "No such book"))),
                                "delete", Map.of("operationId", "deleteBook", "tags", List.of("books"), "parameters", id,
                                        "responses", Map.of("204", Map.of("description", "Deleted"))))),
                "components", Map.of("schemas", Map.of("Book", book)));
    }

    private static Mono<Void> json(HttpServerResponse response, Object body) {
        return response.header("content-type", "application/json").sendString(Mono.just(JSON.writeValueAsString(body))).then();
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(10));
    }
}
