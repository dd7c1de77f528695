package dev.tether.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on a loopback port in front of a real server that a test can freeze: while frozen, bytes in either
 * direction are held, as a network partition or a server that stopped answering holds them; thawed, they flow again
 * on the same connections. How a test makes a real dependency (a database) unreachable without stopping it.
 */
public final class FreezableTcpProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final InetSocketAddress upstream;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private boolean frozen;

    private FreezableTcpProxy(InetSocketAddress upstream) throws IOException {
        this.upstream = upstream;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        daemonThread("freezable-proxy-accept", this::accept);
    }

    /** A proxy for {@code host:port}. */
    public static FreezableTcpProxy to(String host, int port) {
        try {
            return new FreezableTcpProxy(new InetSocketAddress(host, port));
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    public int port() {
        return listener.getLocalPort();
    }

    public void freeze() {
        synchronized (gate) {
            frozen = true;
        }
    }

    public void thaw() {
        synchronized (gate) {
            frozen = false;
            gate.notifyAll();
        }
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(upstream.getAddress(), upstream.getPort());
                sockets.add(client);
                sockets.add(server);
                pump(client, server);
                pump(server, client);
            }
            catch (IOException closed) {
                // the listener closed, or the upstream refused this one connection: the client sees it closed
            }
        }
    }

    private void pump(Socket from, Socket to) throws IOException {
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        daemonThread("freezable-proxy-pump", () -> {
            byte[] buffer = new byte[16 * 1024];
            try (from; to) {
                for (int read; (read = in.read(buffer)) >= 0; ) {
                    awaitThawed();
                    out.write(buffer, 0, read);
                    out.flush();
                }
            }
            catch (IOException | InterruptedException ended) {
                // either side closed, or the proxy did
            }
        });
    }

    private static void daemonThread(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
    }

    private void awaitThawed() throws InterruptedException {
        synchronized (gate) {
            while (frozen) {
                gate.wait();
            }
        }
    }

    @Override
    public void close() throws IOException {
        thaw();
        listener.close();
        for (Socket socket : sockets) {
            socket.close();
        }
    }
}
