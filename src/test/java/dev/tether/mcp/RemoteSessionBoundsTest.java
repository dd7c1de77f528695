package dev.tether.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.test.StepVerifier;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.docker.DockerRunRewriter;
import dev.tether.docker.InstanceId;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ContainerRemover;
import dev.tether.process.ProcessProperties;
import dev.tether.testsupport.LifecycleGuard;

/**
 * A remote endpoint that accepts connections and then never answers must not hold a session, a probe or the
 * request behind it for longer than the discovery bound: the handshake times out over every transport, and
 * saying goodbye to a server that stopped answering is bounded too.
 */
class RemoteSessionBoundsTest {

    private static final Duration DISCOVERY = Duration.ofSeconds(1);
    private static final Duration CLOSE = Duration.ofSeconds(1);
    /** Two handshakes (auto tries both transports) and the bounded closes, with slack. */
    private static final Duration BOUND = Duration.ofSeconds(8);

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @RegisterExtension
    final LifecycleGuard guard = new LifecycleGuard();

    private final BlackHole blackHole = BlackHole.open();

    @AfterEach
    void closeBlackHole() {
        blackHole.close();
    }

    @ParameterizedTest
    @EnumSource(RemoteServer.Transport.class)
    void endpointThatNeverAnswersFailsWithinTheDiscoveryBound(RemoteServer.Transport transport) {
        RemoteServer server = new RemoteServer("silent", blackHole.endpoint(), transport, Map.of(), Map.of());

        StepVerifier.create(sessions().withSession(server, McpSession::listTools))
                .expectErrorSatisfies(error -> {
                    McpServerException failure = assertInstanceOf(McpServerException.class, error);
                    assertTrue(failure.getMessage().contains("timed out"), failure.getMessage());
                })
                .verify(BOUND);

        assertTrue(blackHole.accepted() > 0, "the endpoint was reached");
    }

    @Test
    void failedHandshakeIsNotHeldByAServerThatNeverAnswersTheGoodbye() throws IOException {
        StallingGoodbye server = StallingGoodbye.start();
        try {
            RemoteServer remote = new RemoteServer("stalling", server.endpoint(), RemoteServer.Transport.STREAMABLE_HTTP,
                    Map.of(), Map.of());

            StepVerifier.create(sessions().withSession(remote, McpSession::listTools))
                    .expectErrorSatisfies(error -> assertTrue(error.getMessage().contains("cannot connect to MCP server 'stalling'"),
                            error.getMessage()))
                    .verify(BOUND);

            assertEquals(1, server.goodbyes(), "the session said goodbye with DELETE");
        } finally {
            server.stop();
        }
    }

    private McpSessions sessions() {
        ChildProcesses children = new ChildProcesses(ProcessProperties.defaults(), guard.tether(), ContainerRemover.NONE,
                new SimpleMeterRegistry());
        return new McpSessions(children, new DockerRunRewriter(new InstanceId(guard.tether())),
                new McpProperties(DISCOVERY, null, null, null, CLOSE));
    }

    /** A loopback server that accepts every connection, reads what arrives and never writes a byte. */
    private static final class BlackHole implements AutoCloseable {

        private final ServerSocket socket;
        private final List<Socket> connections = new CopyOnWriteArrayList<>();
        private final AtomicInteger accepted = new AtomicInteger();

        private BlackHole(ServerSocket socket) {
            this.socket = socket;
            daemon(this::acceptForever);
        }

        static BlackHole open() {
            try {
                return new BlackHole(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        URI endpoint() {
            return URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/mcp");
        }

        int accepted() {
            return accepted.get();
        }

        private void acceptForever() {
            while (!socket.isClosed()) {
                try {
                    Socket connection = socket.accept();
                    accepted.incrementAndGet();
                    connections.add(connection);
                    daemon(() -> swallow(connection));
                } catch (IOException closed) {
                    return;
                }
            }
        }

        private static void swallow(Socket connection) {
            try (InputStream in = connection.getInputStream()) {
                in.transferTo(OutputStream.nullOutputStream());
            } catch (IOException closed) {
                // the client gave up: what a black hole is for
            }
        }

        private static void daemon(Runnable body) {
            Thread thread = new Thread(body, "black-hole");
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void close() {
            try {
                socket.close();
                for (Socket connection : connections) {
                    connection.close();
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /**
     * A streamable-HTTP MCP server that begins a session in {@code initialize}, refuses
     * {@code notifications/initialized} (so the handshake fails after the session began), and never answers the
     * {@code DELETE} that ends the session.
     */
    private static final class StallingGoodbye {

        private static final String SESSION = "stalling-session";

        private final HttpServer server;
        private final AtomicInteger goodbyes = new AtomicInteger();

        private StallingGoodbye(HttpServer server) {
            this.server = server;
            server.createContext("/mcp", this::handle);
            server.setExecutor(Executors.newCachedThreadPool());
            server.start();
        }

        static StallingGoodbye start() throws IOException {
            return new StallingGoodbye(HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0));
        }

        URI endpoint() {
            return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/mcp");
        }

        int goodbyes() {
            return goodbyes.get();
        }

        void stop() {
            server.stop(0);
            ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
        }

        private void handle(HttpExchange exchange) throws IOException {
            switch (exchange.getRequestMethod()) {
                case "DELETE" -> goodbyes.incrementAndGet(); // and no answer, ever
                case "POST" -> answer(exchange, JSON.readTree(exchange.getRequestBody()));
                default -> respond(exchange, 405, null);
            }
        }

        private static void answer(HttpExchange exchange, JsonNode request) throws IOException {
            if (!request.has("id")) {
                respond(exchange, 500, null);
                return;
            }
            Object result = switch (request.path("method").asString()) {
                case "initialize" -> Map.of("protocolVersion", request.path("params").path("protocolVersion").asString(),
                        "capabilities", Map.of("tools", Map.of()), "serverInfo", Map.of("name", "stalling", "version", "1"));
                default -> Map.of();
            };
            respond(exchange, 200, JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "id", request.get("id"), "result", result)));
        }

        private static void respond(HttpExchange exchange, int status, String json) throws IOException {
            exchange.getResponseHeaders().add("Mcp-Session-Id", SESSION);
            if (json == null) {
                exchange.sendResponseHeaders(status, -1);
            } else {
                byte[] body = json.getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(status, body.length);
                exchange.getResponseBody().write(body);
            }
            exchange.close();
        }
    }
}
