package dev.tether.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A proxy in front of a real server, on a loopback TCP port or a Unix socket, that a test can make hold traffic: how a
 * test makes a real dependency stop answering without stopping it, or keeps a real client waiting at a chosen step
 * with no race against the server. Released, it passes bytes both ways untouched; an end of stream in one direction
 * reaches the other side as a half-close, which Docker's hijacked attach streams rely on.
 */
public final class HoldingProxy implements AutoCloseable {

    /** What a hold stops. */
    public enum Hold {
        /** Bytes in either direction on every connection, as a network partition or a server that stopped answering. */
        BYTES,
        /** New connections, before they reach the server; those already through go on. */
        NEW_CONNECTIONS
    }

    private final ServerSocketChannel listener;
    private final SocketAddress local;
    private final SocketAddress upstream;
    private final Hold what;
    private final AtomicReference<CountDownLatch> released = new AtomicReference<>(new CountDownLatch(0));
    private final AtomicInteger held = new AtomicInteger();
    private final List<SocketChannel> channels = new CopyOnWriteArrayList<>();

    private HoldingProxy(ServerSocketChannel listener, SocketAddress upstream, Hold what) throws IOException {
        this.listener = listener;
        this.local = listener.getLocalAddress();
        this.upstream = upstream;
        this.what = what;
        daemon("holding-proxy-accept", this::accept).start();
    }

    /** A proxy on a free loopback port for {@code host:port}. */
    public static HoldingProxy tcp(String host, int port, Hold what) {
        try {
            ServerSocketChannel listener = ServerSocketChannel.open();
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return new HoldingProxy(listener, new InetSocketAddress(host, port), what);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** A proxy listening on the Unix socket {@code socket} for the one at {@code upstream}. */
    public static HoldingProxy unix(Path socket, Path upstream, Hold what) throws IOException {
        ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        listener.bind(UnixDomainSocketAddress.of(socket));
        return new HoldingProxy(listener, UnixDomainSocketAddress.of(upstream), what);
    }

    /** The loopback port of a TCP proxy. */
    public int port() {
        return ((InetSocketAddress) local).getPort();
    }

    /** The {@code DOCKER_HOST} value of a Unix socket proxy in front of a Docker engine. */
    public String dockerHost() {
        return "unix://" + ((UnixDomainSocketAddress) local).getPath();
    }

    /** From now on, traffic of the kind this proxy holds waits here until {@link #release()}. */
    public void hold() {
        released.getAndUpdate(latch -> latch.getCount() == 0 ? new CountDownLatch(1) : latch);
    }

    /** Lets what was held through, and everything after it. */
    public void release() {
        released.get().countDown();
    }

    /** New connections, or writes of bytes already read, waiting at the hold now. */
    public int held() {
        return held.get();
    }

    @Override
    public void close() throws IOException {
        release();
        listener.close();
        for (SocketChannel channel : channels) {
            closeQuietly(channel);
        }
        if (local instanceof UnixDomainSocketAddress unix) {
            Files.deleteIfExists(unix.getPath());
        }
    }

    private void accept() {
        while (listener.isOpen()) {
            try {
                SocketChannel client = listener.accept();
                channels.add(client);
                daemon("holding-proxy-connection", () -> pass(client)).start();
            }
            catch (IOException closed) {
                return;
            }
        }
    }

    private void pass(SocketChannel client) {
        try (client) {
            if (what == Hold.NEW_CONNECTIONS) {
                awaitRelease();
            }
            try (SocketChannel server = SocketChannel.open(upstream)) {
                channels.add(server);
                Thread back = daemon("holding-proxy-back", () -> copy(server, client));
                back.start();
                copy(client, server);
                back.join();
            }
        }
        catch (IOException | InterruptedException gone) {
            // the client or the server hung up, or the proxy closed: the client sees its connection closed
        }
        finally {
            // Only open connections are kept for close(): a test's thousands of engine calls come and go.
            channels.removeIf(channel -> !channel.isOpen());
        }
    }

    /**
     * Copies until end of stream, then half-closes the other side; on an error closes both, so that the copy the other
     * way ends too.
     */
    private void copy(SocketChannel from, SocketChannel to) {
        ByteBuffer buffer = ByteBuffer.allocate(16 * 1024);
        try {
            while (from.read(buffer) >= 0) {
                if (what == Hold.BYTES) {
                    awaitRelease();
                }
                buffer.flip();
                while (buffer.hasRemaining()) {
                    to.write(buffer);
                }
                buffer.clear();
            }
            to.shutdownOutput();
        }
        catch (IOException | InterruptedException gone) {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private void awaitRelease() throws InterruptedException {
        held.incrementAndGet();
        try {
            released.get().await();
        }
        finally {
            held.decrementAndGet();
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
