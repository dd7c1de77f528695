package dev.tether.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Command lines for the MCP servers used in tests: the project's own fixture
 * ({@code src/test/fixture/fixture-mcp-server.js}, behaviour chosen by flags such as
 * {@code --ignore-eof}, {@code --fork-grandchild}, see the script's header) and the reference
 * server {@code @modelcontextprotocol/server-everything} ({@code src/test/node}).
 *
 * <p>Docker variants run in {@link TestImages#nodeImage()} and always carry the label
 * {@link #DOCKER_LABEL}{@code =true}, so {@link DockerContainers#removeAllWithLabel(String)} can
 * clean up after a failed test; pass {@code --label key=value} in {@code dockerRunOptions} to
 * find one test's containers with {@link DockerContainers#withLabel(String, String)}.
 */
public final class Fixture {

    /** Label put on every container started through this class. */
    public static final String DOCKER_LABEL = "dev.tether.test";

    /** Path of the fixture script inside {@link TestImages#nodeImage()}. */
    public static final String IMAGE_FIXTURE_SCRIPT = "/app/fixture-mcp-server.js";

    /** Entry point of server-everything inside {@link TestImages#nodeImage()}. */
    public static final String IMAGE_EVERYTHING_SCRIPT =
            "/app/node_modules/@modelcontextprotocol/server-everything/dist/index.js";

    private static final String EVERYTHING_RELATIVE =
            "node_modules/@modelcontextprotocol/server-everything/dist/index.js";

    /** Transports of server-everything; the value is its command-line argument. */
    public enum EverythingTransport {
        STDIO("stdio"), STREAMABLE_HTTP("streamableHttp"), SSE("sse");

        public final String argument;

        EverythingTransport(String argument) {
            this.argument = argument;
        }
    }

    private Fixture() {
    }

    // ---- paths ---------------------------------------------------------------------------

    /** The project root: the nearest directory, from the working directory up, holding the fixture. */
    public static Path projectRoot() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path d = dir; d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("src/test/fixture/fixture-mcp-server.js"))) {
                return d;
            }
        }
        throw new IllegalStateException("cannot find src/test/fixture/fixture-mcp-server.js above " + dir);
    }

    /** Absolute path of the fixture script on the host. */
    public static Path script() {
        return projectRoot().resolve("src/test/fixture/fixture-mcp-server.js");
    }

    /**
     * {@code src/test/node/node_modules}, as its real path: a linked folder (a worktree sharing another checkout's
     * packages) must be walked, not copied as a link into the test image. Fails with a hint when {@code npm ci} has
     * not been run.
     */
    public static Path nodeModules() {
        Path modules = projectRoot().resolve("src/test/node/node_modules");
        if (!Files.isRegularFile(modules.resolve("@modelcontextprotocol/server-everything/package.json"))) {
            throw new IllegalStateException(modules + " lacks @modelcontextprotocol/server-everything:"
                    + " run `npm ci` in src/test/node (.ci/run does)");
        }
        try {
            return modules.toRealPath();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** The host's {@code node}: first match on PATH, symlinks resolved. */
    public static Path nodeBinary() {
        String path = System.getenv().getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
        for (String dir : path.split(":")) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, "node");
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                try {
                    return candidate.toRealPath();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        throw new IllegalStateException("no `node` on PATH (" + path + ")");
    }

    // ---- the fixture ---------------------------------------------------------------------

    /** {@code node /abs/path/fixture-mcp-server.js flags...}, for a plain child process. */
    public static List<String> command(String... flags) {
        List<String> cmd = new ArrayList<>(List.of(nodeBinary().toString(), script().toString()));
        cmd.addAll(Arrays.asList(flags));
        return cmd;
    }

    /** {@code docker run -i --rm --label dev.tether.test=true IMAGE node /app/fixture-mcp-server.js flags...}. */
    public static List<String> dockerCommand(String... flags) {
        return dockerCommand(List.of(), flags);
    }

    /** As {@link #dockerCommand(String...)}, with extra {@code docker run} options before the image. */
    public static List<String> dockerCommand(List<String> dockerRunOptions, String... flags) {
        List<String> cmd = dockerRun(dockerRunOptions);
        cmd.add(IMAGE_FIXTURE_SCRIPT);
        cmd.addAll(Arrays.asList(flags));
        return cmd;
    }

    // ---- server-everything ---------------------------------------------------------------

    /** {@code node /abs/.../server-everything/dist/index.js stdio}, for a plain child process. */
    public static List<String> everythingCommand() {
        return List.of(nodeBinary().toString(), nodeModules().resolve(
                "@modelcontextprotocol/server-everything/dist/index.js").toString(), "stdio");
    }

    /** server-everything in stdio mode inside {@link TestImages#nodeImage()}. */
    public static List<String> everythingDockerCommand() {
        return everythingDockerCommand(List.of());
    }

    /** As {@link #everythingDockerCommand()}, with extra {@code docker run} options before the image. */
    public static List<String> everythingDockerCommand(List<String> dockerRunOptions) {
        List<String> cmd = dockerRun(dockerRunOptions);
        cmd.add(IMAGE_EVERYTHING_SCRIPT);
        cmd.add(EverythingTransport.STDIO.argument);
        return cmd;
    }

    /**
     * server-everything as a plain child in any transport. HTTP transports listen on {@code port}
     * (env {@code PORT}; it binds every interface, connect via 127.0.0.1): streamable HTTP at
     * {@code http://127.0.0.1:PORT/mcp}, SSE at {@code GET /sse} + {@code POST /message?sessionId=}.
     * It logs "listening on port"/"Server is running on port" to stderr once ready.
     */
    public static ProcessBuilder everything(EverythingTransport transport, int port) {
        ProcessBuilder pb = new ProcessBuilder(nodeBinary().toString(),
                projectRoot().resolve("src/test/node").resolve(EVERYTHING_RELATIVE).toString(),
                transport.argument);
        nodeModules(); // fail early with a hint
        pb.environment().put("PORT", Integer.toString(port));
        return pb;
    }

    /**
     * A loopback port held bound but not listening, so every connect to it is refused for as long as it is
     * open: no other process can take the port meanwhile, and the kernel never hands it out as the source
     * port of a connection (which could connect to itself). Close it when the test is done.
     */
    public static RefusingPort refusingLoopbackPort() {
        try {
            Socket socket = new Socket();
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return new RefusingPort(socket);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** See {@link #refusingLoopbackPort()}. */
    public record RefusingPort(Socket socket) implements AutoCloseable {

        /** An MCP endpoint on this port, where nothing ever answers. */
        public String endpoint() {
            return "http://127.0.0.1:" + socket.getLocalPort() + "/mcp";
        }

        @Override
        public void close() {
            try {
                socket.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** A loopback TCP port that was free a moment ago. */
    public static int freeLoopbackPort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<String> dockerRun(List<String> dockerRunOptions) {
        List<String> cmd = new ArrayList<>(List.of("docker", "run", "-i", "--rm", "--label", DOCKER_LABEL + "=true"));
        cmd.addAll(dockerRunOptions);
        cmd.add(TestImages.nodeImage());
        cmd.add("node");
        return cmd;
    }
}
