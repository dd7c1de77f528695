package dev.tether.api;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * HTTP/1.1 written by hand over a socket, for what ordinary clients will not send: a forged {@code Host} (the JDK's
 * client refuses to set it), several {@code Origin}s, any address to connect to. One request per connection.
 */
final class RawHttp {

    private static final int TIMEOUT_MILLIS = 30_000;

    /** Status line code and everything after the head, chunked bodies left as they came (enough for {@code contains}). */
    record Answer(int status, String body) {

        String tag() {
            int at = body.indexOf("\"_tag\":\"");
            return at < 0 ? "" : body.substring(at + 8, body.indexOf('"', at + 8));
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }

    private RawHttp() {
    }

    static Answer send(InetAddress address, int port, String method, String path, Map<String, String> headers) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address, port), TIMEOUT_MILLIS);
            socket.setSoTimeout(TIMEOUT_MILLIS);
            StringBuilder head = new StringBuilder(method + " " + path + " HTTP/1.1\r\n");
            Map<String, String> all = new LinkedHashMap<>(headers);
            all.putIfAbsent("Host", "127.0.0.1:" + port);
            all.put("Connection", "close");
            boolean body = method.equals("POST");
            if (body) {
                all.put("Content-Type", "application/json");
                all.put("Accept", "application/json, text/event-stream");
                all.put("Content-Length", "2");
            }
            all.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
            head.append("\r\n").append(body ? "{}" : "");
            OutputStream out = socket.getOutputStream();
            out.write(head.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            String text = readAll(socket.getInputStream());
            int status = Integer.parseInt(text.substring(text.indexOf(' ') + 1, text.indexOf(' ') + 4));
            int split = text.indexOf("\r\n\r\n");
            return new Answer(status, split < 0 ? "" : text.substring(split + 4));
        }
        catch (IOException ex) {
            throw new UncheckedIOException(method + " " + path + " to " + address + ":" + port, ex);
        }
    }

    /** Reads until the server closes, or stops at the first body bytes of an endless stream (SSE). */
    private static String readAll(InputStream in) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        int read;
        while ((read = in.read(buffer)) >= 0) {
            bytes.write(buffer, 0, read);
            String sofar = bytes.toString(StandardCharsets.UTF_8);
            if (sofar.contains("text/event-stream") && sofar.contains("\r\n\r\n")) {
                break;
            }
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
