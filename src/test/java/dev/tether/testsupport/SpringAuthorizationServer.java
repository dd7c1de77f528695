package dev.tether.testsupport;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Spring Authorization Server as a team runs it, in its own process: {@code src/test/authserver} (its own build, a
 * servlet application; {@code .ci/run} packages it), one {@code client_credentials} client, and beside it a remote
 * MCP server at {@code /mcp} that answers only tokens it issued. {@link #tokenRequests()} counts the token requests
 * it served.
 */
public final class SpringAuthorizationServer implements AutoCloseable {

    static final Path JAR = Path.of("src/test/authserver/target/tether-test-authserver.jar");
    /** When its start is called stuck: it takes seconds; at load 36 here, 82 s to initialise Tomcat's context. */
    private static final Duration START_BOUND = Duration.ofSeconds(300);
    private static final Pattern COUNT = Pattern.compile("\"count\":(\\d+)");

    private final Process process;
    private final int port;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private SpringAuthorizationServer(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts it on a free loopback port with one client, and waits (bounded) until it answers. */
    public static SpringAuthorizationServer start(String clientId, String clientSecret, Path log) {
        if (!Files.isRegularFile(JAR)) {
            fail(JAR + " is missing: build it with `./mvnw -f src/test/authserver/pom.xml -DskipTests package` (.ci/run does)");
        }
        int port = Fixture.freeLoopbackPort();
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        try {
            Process process = new ProcessBuilder(List.of(java.toString(), "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-jar",
                    JAR.toAbsolutePath().toString(), "--server.port=" + port, "--test.client-id=" + clientId,
                    "--test.client-secret=" + clientSecret))
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            SpringAuthorizationServer server = new SpringAuthorizationServer(process, port);
            try {
                server.awaitAnswering(log);
            }
            catch (AssertionError notAnswering) {
                server.close();
                throw notAnswering;
            }
            return server;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** Its origin: the issuer, the token endpoint's and the MCP server's. */
    public String origin() {
        return "http://127.0.0.1:" + port;
    }

    public String tokenUrl() {
        return origin() + "/oauth2/token";
    }

    public String mcpUrl() {
        return origin() + "/mcp";
    }

    /** Requests its token endpoint served so far. */
    public int tokenRequests() {
        String body = get("/token-requests");
        Matcher count = COUNT.matcher(body);
        if (!count.find()) {
            throw new AssertionError("no count in " + body);
        }
        return Integer.parseInt(count.group(1));
    }

    /** Revokes the token with this id ({@code jti}): the MCP server refuses it from now on. */
    public void revoke(String tokenId) {
        send(HttpRequest.newBuilder(URI.create(origin() + "/revoked?jti=" + tokenId)).POST(HttpRequest.BodyPublishers.noBody()));
    }

    private String get(String path) {
        return send(HttpRequest.newBuilder(URI.create(origin() + path)));
    }

    private String send(HttpRequest.Builder request) {
        try {
            return http.send(request.timeout(Duration.ofSeconds(10)).build(), BodyHandlers.ofString()).body();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    private void awaitAnswering(Path log) {
        Await.until(() -> {
            if (!process.isAlive()) {
                fail("Spring Authorization Server exited with " + process.exitValue() + ": " + read(log));
            }
            try {
                tokenRequests();
                return true;
            }
            catch (UncheckedIOException notYet) {
                return false;
            }
        }, START_BOUND, () -> "Spring Authorization Server answers on " + port + ": " + read(log));
    }

    private static String read(Path log) {
        try {
            return Files.readString(log);
        }
        catch (IOException ex) {
            return "(its log is unreadable: " + ex + ")";
        }
    }

    @Override
    public void close() {
        OsProcesses.stop(process);
    }
}
