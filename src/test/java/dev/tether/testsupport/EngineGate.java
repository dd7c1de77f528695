package dev.tether.testsupport;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A Docker engine socket in front of the real one, which can be shut so that a {@code docker} client waits before its
 * first call reaches the engine: a {@code docker run} client (with {@code DOCKER_HOST} pointing here) held exactly
 * where it is still starting its container, for as long as a test needs, with no race against the engine. Open, it
 * passes bytes both ways untouched, hijacked attach streams included; shutting it holds new connections only.
 */
public final class EngineGate implements AutoCloseable {

    private static final Path ENGINE = Path.of(System.getenv().getOrDefault("DOCKER_HOST", "unix:///var/run/docker.sock")
            .replaceFirst("^unix://", ""));

    private final Path socket;
    private final ServerSocketChannel server;
    private final AtomicReference<CountDownLatch> shut = new AtomicReference<>(new CountDownLatch(0));
    private final AtomicInteger held = new AtomicInteger();

    private EngineGate(Path socket) throws IOException {
        this.socket = socket;
        this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        daemon("engine-gate-accept", this::accept).start();
    }

    /** An open gate listening on {@code socket}. */
    public static EngineGate open(Path socket) throws IOException {
        return new EngineGate(socket);
    }

    /** The {@code DOCKER_HOST} value of this gate. */
    public String dockerHost() {
        return "unix://" + socket;
    }

    /** From now on, a new connection waits here until {@link #reopen()}. */
    public void shut() {
        shut.getAndUpdate(latch -> latch.getCount() == 0 ? new CountDownLatch(1) : latch);
    }

    /** Lets the held connections through, and every new one. */
    public void reopen() {
        shut.get().countDown();
    }

    /** Connections waiting at the shut gate. */
    public int held() {
        return held.get();
    }

    @Override
    public void close() throws IOException {
        reopen();
        server.close();
        Files.deleteIfExists(socket);
    }

    private void accept() {
        while (server.isOpen()) {
            try {
                SocketChannel client = server.accept();
                daemon("engine-gate-connection", () -> pass(client)).start();
            }
            catch (IOException closed) {
                return;
            }
        }
    }

    private void pass(SocketChannel client) {
        try (client) {
            held.incrementAndGet();
            try {
                shut.get().await();
            }
            finally {
                held.decrementAndGet();
            }
            try (SocketChannel engine = SocketChannel.open(UnixDomainSocketAddress.of(ENGINE))) {
                Thread back = daemon("engine-gate-back", () -> copy(engine, client));
                back.start();
                copy(client, engine);
                back.join();
            }
        }
        catch (IOException | InterruptedException gone) {
            // the client or the engine hung up, or the test ended: nothing to pass any more
        }
    }

    /**
     * Copies until end of stream, then half-closes the other side, as a hijacked attach stream expects; on an error
     * closes both, so that the copy the other way ends too.
     */
    private static void copy(SocketChannel from, SocketChannel to) {
        ByteBuffer buffer = ByteBuffer.allocate(16 * 1024);
        try {
            while (from.read(buffer) >= 0) {
                buffer.flip();
                while (buffer.hasRemaining()) {
                    to.write(buffer);
                }
                buffer.clear();
            }
            to.shutdownOutput();
        }
        catch (IOException gone) {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        }
        catch (IOException ignored) {
            // closing is all that was asked
        }
    }

    private static Thread daemon(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        return thread;
    }
}
