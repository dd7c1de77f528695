package dev.tether.daemon;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * Prints {@code EXECUTOR_READY:<port>}, the one line the Executor desktop app waits for on its sidecar's stdout
 * before it loads the UI from that port ({@code apps/desktop/src/sidecar/server.ts}), once {@code /api/health}
 * answers 200 on the port the server bound: the promise is "the API answers", not "the context is refreshed". The
 * probe is a plain socket, as the first client would be, so nothing is built for it that a start would not need.
 */
@Component
final class ReadyLine implements ApplicationListener<ApplicationReadyEvent> {

    private static final Logger log = LoggerFactory.getLogger(ReadyLine.class);
    private static final Duration BOUND = Duration.ofSeconds(10);
    private static final Duration PAUSE = Duration.ofMillis(20);

    private final boolean enabled;
    private final String host;

    ReadyLine(TetherProperties properties, Environment environment) {
        this.enabled = properties.readyLine();
        String address = environment.getProperty("server.address", "127.0.0.1").strip();
        // a wildcard address is reached over loopback, as the app reaches it
        this.host = address.isEmpty() || address.equals("0.0.0.0") || address.equals("::") || address.equals("[::]")
                ? "127.0.0.1" : address.replaceAll("^\\[|\\]$", "");
    }

    @Override
    public void onApplicationEvent(ApplicationReadyEvent event) {
        if (!enabled || !(event.getApplicationContext() instanceof WebServerApplicationContext web)) {
            return;
        }
        int port = Objects.requireNonNull(web.getWebServer(), "the web server").getPort();
        long deadline = System.nanoTime() + BOUND.toNanos();
        int status = probe(port);
        while (status != 200 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(PAUSE.toMillis());
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                break;
            }
            status = probe(port);
        }
        if (status != 200) {
            log.warn("/api/health on port {} answered {} within {}; announcing the port all the same", port,
                    status < 0 ? "nothing" : status, BOUND);
        }
        System.out.println("EXECUTOR_READY:" + port);
        System.out.flush();
    }

    /** The status of {@code GET /api/health}, or -1 when nothing answered. */
    private int probe(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 1000);
            socket.setSoTimeout(2000);
            String authority = (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
            OutputStream out = socket.getOutputStream();
            out.write(("GET /api/health HTTP/1.1\r\nHost: " + authority + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] head = in.readNBytes(12); // "HTTP/1.1 200"
            String line = new String(head, StandardCharsets.US_ASCII);
            return line.startsWith("HTTP/") && line.length() == 12 ? Integer.parseInt(line.substring(9, 12)) : -1;
        }
        catch (IOException | NumberFormatException ex) {
            return -1;
        }
    }
}
