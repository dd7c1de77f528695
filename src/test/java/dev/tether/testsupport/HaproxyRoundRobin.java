package dev.tether.testsupport;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;


/**
 * Debian's HAProxy ({@code apt-get install haproxy}, which {@code .ci/run} does) in front of replicas on loopback,
 * round robin, in HTTP mode as a Kubernetes ingress or a cloud load balancer would be: one loopback port, every
 * request to the next replica. A client that leaves closes its connection, and HAProxy closes the one to the replica.
 * Without HAProxy the test that needs it is skipped, unless CI requires it.
 */
public final class HaproxyRoundRobin implements AutoCloseable {

    private static final Path BINARY = Path.of("/usr/sbin/haproxy");
    /** The configuration docs/kubernetes.md gives an operator for rolling restarts. */
    private static final Path DOCUMENTED = Path.of("deploy/haproxy.cfg");

    private final Process process;
    private final int port;
    private final Path log;

    private HaproxyRoundRobin(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /** Starts HAProxy on a free loopback port, with {@code backends} (loopback ports) in this order; returns once it listens. */
    public static HaproxyRoundRobin start(Path dir, List<Integer> backends) throws IOException {
        return start(dir, backends, "option httpchk GET /api/health", "check inter 1s fall 2 rise 1");
    }

    /**
     * HAProxy configured as an operator is told to for rolling restarts: {@code deploy/haproxy.cfg}, the file
     * {@code docs/kubernetes.md} points to, line for line, with this test's loopback ports in place of its bind and
     * server addresses (health checks on the readiness endpoint, which a replica fails from the moment it is told to
     * stop, and a request whose connection a replica refused tried again on another replica).
     */
    public static HaproxyRoundRobin startForRollingRestarts(Path dir, List<Integer> backends) throws IOException {
        Prerequisites.require(Files.isExecutable(BINARY), "no HAProxy at " + BINARY, ".ci/run installs Debian's haproxy");
        int port = Fixture.freeLoopbackPort();
        List<String> lines = new ArrayList<>();
        for (String line : Files.readAllLines(DOCUMENTED)) {
            String setting = line.strip();
            if (setting.startsWith("bind ")) {
                lines.add("    bind 127.0.0.1:" + port);
            }
            else if (setting.startsWith("server ")) {
                if (lines.stream().noneMatch(added -> added.strip().startsWith("server "))) {
                    IntStream.range(0, backends.size())
                            .forEach(i -> lines.add("    server replica" + i + " 127.0.0.1:" + backends.get(i)));
                }
            }
            else {
                lines.add(line);
            }
        }
        return run(dir, port, String.join("\n", lines) + "\n");
    }

    private static HaproxyRoundRobin start(Path dir, List<Integer> backends, String check, String server)
            throws IOException {
        Prerequisites.require(Files.isExecutable(BINARY), "no HAProxy at " + BINARY, ".ci/run installs Debian's haproxy");
        int port = Fixture.freeLoopbackPort();
        String servers = IntStream.range(0, backends.size())
                .mapToObj(i -> "    server replica" + i + " 127.0.0.1:" + backends.get(i) + " " + server)
                .collect(Collectors.joining("\n"));
        return run(dir, port, """
                global
                    maxconn 4096
                defaults
                    mode http
                    timeout connect 2s
                    timeout client 120s
                    timeout server 120s
                    option abortonclose
                frontend tether
                    bind 127.0.0.1:%d
                    default_backend replicas
                backend replicas
                    balance roundrobin
                    %s
                %s
                """.formatted(port, check, servers));
    }

    private static HaproxyRoundRobin run(Path dir, int port, String configuration) throws IOException {
        Path config = dir.resolve("haproxy.cfg");
        Files.createDirectories(dir);
        Files.writeString(config, configuration);
        Path log = dir.resolve("haproxy.log");
        Process process = new ProcessBuilder(BINARY.toString(), "-db", "-f", config.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        HaproxyRoundRobin haproxy = new HaproxyRoundRobin(process, port, log);
        Await.until(haproxy::listening, Duration.ofSeconds(10), () -> "HAProxy listens on " + port + ": " + haproxy.output());
        return haproxy;
    }

    public int port() {
        return port;
    }

    public long pid() {
        return process.pid();
    }

    private boolean listening() {
        if (!process.isAlive()) {
            fail("HAProxy exited with " + process.exitValue() + ": " + output());
        }
        try (Socket ignored = new Socket("127.0.0.1", port)) {
            return true;
        }
        catch (IOException notYet) {
            return false;
        }
    }

    private String output() {
        try {
            return Files.readString(log);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
