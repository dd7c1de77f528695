package dev.tether.testsupport;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The TypeScript MCP SDK's OAuth example, as its users run it: {@code simpleStreamableHttp.js --oauth} from
 * {@code src/test/clients}, an MCP server on {@code MCP_PORT} that answers 401 with RFC 9728 metadata, and beside it
 * an RFC 8414 authorization server on {@code MCP_AUTH_PORT} with dynamic client registration and PKCE that approves
 * every authorization at once. Its tokens last an hour; it does not refresh them.
 */
public final class OAuthExampleServer implements AutoCloseable {

    static final String SCRIPT = "node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js";

    private final Process process;
    private final int mcpPort;
    private final int authPort;

    private OAuthExampleServer(Process process, int mcpPort, int authPort) {
        this.process = process;
        this.mcpPort = mcpPort;
        this.authPort = authPort;
    }

    /** Starts it on two free loopback ports and waits (bounded) until both listen. */
    public static OAuthExampleServer start(Path log) {
        Path directory = NodeClients.directory();
        if (!Files.isRegularFile(directory.resolve(SCRIPT))) {
            fail(directory.resolve(SCRIPT) + " is missing: run `npm ci` in src/test/clients");
        }
        int mcpPort = Fixture.freeLoopbackPort();
        int authPort = Fixture.freeLoopbackPort();
        try {
            ProcessBuilder builder = new ProcessBuilder(List.of(Fixture.nodeBinary().toString(), directory.resolve(SCRIPT).toString(), "--oauth"))
                    .directory(directory.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            builder.environment().put("MCP_PORT", Integer.toString(mcpPort));
            builder.environment().put("MCP_AUTH_PORT", Integer.toString(authPort));
            OAuthExampleServer server = new OAuthExampleServer(builder.start(), mcpPort, authPort);
            server.awaitListening(log);
            return server;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** The MCP endpoint, as its protected-resource metadata names it. */
    public String mcpUrl() {
        return "http://localhost:" + mcpPort + "/mcp";
    }

    /** The authorization server's issuer origin. */
    public String authorizationServer() {
        return "http://localhost:" + authPort;
    }

    private void awaitListening(Path log) throws IOException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        for (int port : List.of(mcpPort, authPort)) {
            while (true) {
                if (!process.isAlive()) {
                    fail("the SDK's OAuth example exited with " + process.exitValue() + ": " + Files.readString(log));
                }
                if (System.nanoTime() > deadline) {
                    close();
                    fail("the SDK's OAuth example did not listen on " + port + " within 30 s: " + Files.readString(log));
                }
                try (Socket socket = new Socket()) {
                    socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
                    break;
                }
                catch (IOException notYet) {
                    try {
                        Thread.sleep(100);
                    }
                    catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(ex);
                    }
                }
            }
        }
    }

    @Override
    public void close() {
        OsProcesses.stop(process);
    }
}
