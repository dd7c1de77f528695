package dev.tether.server;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One kept-alive HTTP/1.1 connection written by hand, as a crowd's member holds it: requests one after another on the
 * same socket, bytes the server never finishes reading (half a head, half a body), and a look at whether the server
 * closed it.
 */
final class HttpSocket implements Closeable {

    private static final int READ_TIMEOUT_MILLIS = 60_000;

    /** An answer: its status, its headers (names in lower case) and its body as text. */
    record Answer(int status, Map<String, String> headers, String body) {

        String tag() {
            int at = body.indexOf("\"_tag\":\"");
            return at < 0 ? "" : body.substring(at + 8, body.indexOf('"', at + 8));
        }

        @Override
        public String toString() {
            return status + " " + headers + " " + body;
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final int port;

    private HttpSocket(Socket socket, int port) throws IOException {
        this.socket = socket;
        this.port = port;
        socket.setSoTimeout(READ_TIMEOUT_MILLIS);
        this.in = new BufferedInputStream(socket.getInputStream());
    }

    static HttpSocket open(int port) throws IOException {
        return new HttpSocket(new Socket(InetAddress.getLoopbackAddress(), port), port);
    }

    /** A connection whose receive window is {@code bytes}: a client that reads nothing fills it at once. */
    static HttpSocket withReceiveBuffer(int port, int bytes) throws IOException {
        Socket socket = new Socket();
        socket.setReceiveBufferSize(bytes);
        socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return new HttpSocket(socket, port);
    }

    /** Sends a request without a body on this connection, which stays open, and reads its whole answer. */
    Answer get(String path, Map<String, String> headers) throws IOException {
        StringBuilder head = new StringBuilder("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n");
        headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
        send(head.append("\r\n").toString());
        return read();
    }

    /** Writes {@code text} as it is: half a head, a head with a long body to come, a byte of a trickle. */
    void send(String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.ISO_8859_1));
        socket.getOutputStream().flush();
    }

    /** Writes {@code count} bytes of a body. */
    void sendBody(long count) throws IOException {
        byte[] chunk = new byte[64 * 1024];
        Arrays.fill(chunk, (byte) ' ');
        for (long left = count; left > 0; left -= chunk.length) {
            socket.getOutputStream().write(chunk, 0, (int) Math.min(chunk.length, left));
        }
        socket.getOutputStream().flush();
    }

    /** Reads one answer's head, then its body by its length or its chunks. */
    Answer read() throws IOException {
        String statusLine = line();
        Map<String, String> headers = new LinkedHashMap<>();
        for (String line = line(); !line.isEmpty(); line = line()) {
            int colon = line.indexOf(':');
            headers.put(line.substring(0, colon).strip().toLowerCase(Locale.ROOT), line.substring(colon + 1).strip());
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (headers.containsKey("content-length")) {
            body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
        }
        else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            for (int size = Integer.parseInt(line().split(";")[0].strip(), 16); size > 0;
                    size = Integer.parseInt(line().split(";")[0].strip(), 16)) {
                body.write(in.readNBytes(size));
                line();
            }
            line();
        }
        return new Answer(Integer.parseInt(statusLine.split(" ")[1]), headers, body.toString(StandardCharsets.UTF_8));
    }

    /**
     * Whether the server has closed this connection: the end of the stream (or a reset) within {@code waitMillis}; a
     * connection still open shows nothing in that time.
     */
    boolean closedByServer(int waitMillis) throws IOException {
        socket.setSoTimeout(waitMillis);
        try {
            return in.read() < 0;
        }
        catch (SocketTimeoutException open) {
            return false;
        }
        catch (IOException reset) {
            return true;
        }
        finally {
            socket.setSoTimeout(READ_TIMEOUT_MILLIS);
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new IOException("the server closed the connection in the middle of an answer: " + line);
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
